.PHONY: run test test-sqlite
run:  ## set up and run web + worker + beat on 127.0.0.1:8000
	@bash scripts/run.sh
test: ## run the whole test suite (starts PostgreSQL/Redis if needed)
	@bash scripts/test.sh
test-sqlite: ## ingestion, inventory and demo-seed tests on make run's SQLite and filesystem broker
	@bash scripts/test_sqlite.sh
