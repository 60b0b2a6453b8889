"""Development settings: the default of every entry point (manage.py, wsgi, celery) and of `make run`.

DEBUG is on unless SECRET_KEY is set in the environment (a deployment): then it defaults to off,
and the development key is refused (``secret_key_check``). Plain HTTP keeps working either way:
no HTTPS redirect and no HSTS here (agents speak plain HTTP, often behind a TLS proxy).
"""
from .base import *  # noqa: F403
from .base import SECRET_KEY, SECRET_KEY_FROM_ENV, env, secret_key_check

DEBUG = env.bool("DEBUG", default=not SECRET_KEY_FROM_ENV)
secret_key_check(debug=DEBUG, secret_key=SECRET_KEY)
