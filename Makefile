.PHONY: run test
run:  ## set up and run web + worker + beat on 127.0.0.1:8000
	@bash scripts/run.sh
test: ## run the whole test suite (starts PostgreSQL/Redis if needed)
	@bash scripts/test.sh
