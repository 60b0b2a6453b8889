"""gunicorn's settings file, read by ``gunicorn config.wsgi`` started from the repository's root (the
README's process set and the Procfile): the access log masks credentials (core/accesslog.py)."""
logger_class = "core.accesslog.MaskedAccessLogger"
