"""Settings shared by every environment.

Every value comes from an environment variable with a safe default, so a fresh
checkout runs with nothing configured: an embedded SQLite database and an
embedded (filesystem) Celery broker under ``var/``.  The other settings modules
only override. Nothing else in the project reads ``os.environ``.
"""
from datetime import timedelta
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured
from kombu import Exchange, Queue

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(environ.Env().str("VAR_DIR", default=str(BASE_DIR / "var")))

env = environ.Env()

# --- Safe defaults: SECRET_KEY and DEBUG ------------------------------------
# Setting SECRET_KEY in the environment says "this is a deployment": DEBUG then defaults to
# off, also under the default (local) settings. With DEBUG off the development key, which is
# public, is refused at start-up by every settings module (``secret_key_check``).
DEV_SECRET_KEY = "dev-insecure-secret-key-change-me-0123456789abcdefghijklmnop"
SECRET_KEY_FROM_ENV = "SECRET_KEY" in env.ENVIRON
SECRET_KEY = env.str("SECRET_KEY", default=DEV_SECRET_KEY)
DEBUG = env.bool("DEBUG", default=False)


def secret_key_check(*, debug: bool, secret_key: str) -> None:
    """Start-up guard, called by each settings module once its DEBUG is final.

    Raises ``ImproperlyConfigured`` (the process does not start) when SECRET_KEY is empty, or
    when DEBUG is off and SECRET_KEY is the development key: sessions, admin logins and the
    at-rest encryption key derived from SECRET_KEY would then rest on a value anyone can read.
    """
    if not secret_key:
        raise ImproperlyConfigured("SECRET_KEY is set but empty. Set it to a long random value.")
    if not debug and secret_key == DEV_SECRET_KEY:
        raise ImproperlyConfigured(
            "SECRET_KEY is the development key, which is public: it is refused when DEBUG is off. "
            "Set SECRET_KEY to a long random value "
            "(python -c 'import secrets; print(secrets.token_urlsafe(50))'), "
            "or set DEBUG=true for development."
        )

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    # The operators' console first (its templates override the admin's), then the admin with the
    # console's site as the default one (docs/console.md).
    "console",
    "console.apps.ConsoleAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "core",
    "inventory",
    "classification",
    "detections",
    "webhooks",
    "testgen",
]

MIDDLEWARE = [
    "core.middleware.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "core.csp.HtmlCSPMiddleware",
]

# --- Content-Security-Policy (core/csp.py, django-csp) -------------------------
# Every HTML page (the console; the API docs page has its own, core/csp.py): the service's own
# origin only, no inline script, no plugins, no framing, forms post to the service only.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
APPEND_SLASH = False

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------
# PostgreSQL in production and in the tests; an embedded SQLite file when
# DATABASE_URL is not set, so the run command works on a bare machine.
DATABASES = {
    "default": env.db_url("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'apiscope.sqlite3'}"),
}
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DB_CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # Several processes (web, worker, beat) share the file: wait on locks
    # instead of failing, and let readers run beside the writer.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 30,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL;",
    }
    DATABASES["default"]["CONN_MAX_AGE"] = 0
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Celery ---------------------------------------------------------------
# Redis when REDIS_URL is set; otherwise kombu's filesystem transport under
# var/broker, which needs no server.
REDIS_URL = env.str("REDIS_URL", default="")
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
    # kombu's Redis transport with a closed-connection fix: see config/broker.py.
    CELERY_BROKER_TRANSPORT = "config.broker:Transport"


def filesystem_broker_options(folder: Path) -> dict:
    """kombu's filesystem transport with its queue, processed and control folders under ``folder``."""
    return {
        "data_folder_in": str(folder / "queue"),
        "data_folder_out": str(folder / "queue"),
        "processed_folder": str(folder / "processed"),
        "control_folder": str(folder / "control"),
        "store_processed": False,
    }


if not REDIS_URL:
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = filesystem_broker_options(VAR_DIR / "broker")
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = False
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TIMEZONE = "UTC"
# Celery's Django fixup closes every database connection around each task unless this is
# set: a new PostgreSQL backend per task (fork, authentication, cold catalogue caches) cost
# the analysis worker a quarter of its throughput. With it, the fixup closes them every
# 1,000 tasks, and ``config.celery`` drops broken or CONN_MAX_AGE-expired ones around every task.
CELERY_DB_REUSE_MAX = env.int("WORKER_DB_REUSE_MAX", default=1000)
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")

# --- Celery queues ----------------------------------------------------------
# Every queue a task is sent to is declared here, and a worker started without -Q consumes every
# declared queue: the README's minimal process set (one `celery -A config worker`, one beat) runs
# every kind of task, webhook deliveries included (DECISIONS §7). The Procfile's dedicated
# `webhooks` worker is an optimisation: its main `worker` excludes WEBHOOK_QUEUE (-X), so
# deliveries never wait behind a trace-analysis backlog. Add a queue here before routing to it.
CELERY_TASK_DEFAULT_QUEUE = "celery"  # trace analysis, test runs, beat's other jobs
WEBHOOK_QUEUE = env.str("WEBHOOK_QUEUE", default="webhooks")  # webhook deliveries, their sweep and pruning
CELERY_TASK_QUEUES = [Queue(name, Exchange(name), routing_key=name)  # what Celery would create on first use
                      for name in dict.fromkeys((CELERY_TASK_DEFAULT_QUEUE, WEBHOOK_QUEUE))]
# Beat looks this often (seconds; 0 turns it off) for declared queues holding work that no running
# worker consumes, and logs a WARNING naming each (core/queues.py).
QUEUES_CHECK_INTERVAL = env.float("QUEUES_CHECK_INTERVAL", default=60.0)

CELERY_BEAT_SCHEDULE: dict = {
    # Ingestion (inventory/tasks.py): re-send messages of batches left pending
    # (broker or worker lost), and prune traces, usage minutes and done batches.
    "ingest-requeue": {"task": "inventory.tasks.ingest_requeue_task", "schedule": 30.0},
    "ingest-prune": {"task": "inventory.tasks.ingest_prune_task", "schedule": 600.0},
    # Webhooks: re-send deliveries whose message or worker was lost (DECISIONS §7 "nothing lost").
    "webhooks-deliveries-sweep": {
        "task": "webhooks.tasks.deliveries_sweep_task",
        "schedule": 10.0,
        "options": {"queue": WEBHOOK_QUEUE, "expires": 10.0},
    },
    # Webhooks: runs history to the newest 10 per webhook, finished deliveries after 7 days.
    "webhooks-prune": {
        "task": "webhooks.tasks.webhooks_prune_task",
        "schedule": 600.0,
        "options": {"queue": WEBHOOK_QUEUE, "expires": 600.0},
    },
    # Test runs left behind by a lost worker or message (testgen).
    "testgen-runs-sweep": {"task": "testgen.tasks.test_runs_sweep_task", "schedule": 300.0},
    # Generated OpenAPI specs (detections/tasks.py): lost refreshes, hosts never built or changed by operators.
    "openapi-generated-sweep": {"task": "detections.tasks.generated_specs_sweep_task", "schedule": 60.0,
                                "options": {"expires": 60.0}},
}

# --- REST framework -------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["core.authentication.ApiKeyAuthentication"],
    # A valid key whose scope allows the route (DECISIONS §2; routes declare theirs: core/scopes.py).
    "DEFAULT_PERMISSION_CLASSES": ["core.scopes.ScopePermission"],
    # orjson: the same JSON as DRF's JSONRenderer, several times faster (core/renderers.py).
    "DEFAULT_RENDERER_CLASSES": ["core.renderers.ORJSONRenderer"],
    # JSON whatever the Accept header says (no 406): core/negotiation.py.
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "core.negotiation.JsonContentNegotiation",
    # JSON bodies only; upload routes (GraphQL schema, OpenAPI specs) set their own multipart parsers.
    # Anything else is 415 (DECISIONS §1: request bodies are JSON).
    "DEFAULT_PARSER_CLASSES": ["core.parsers.JSONParser"],
    # Each operation's required scope in the schema (x-required-scope, x-allowed-scopes): core/openapi.py.
    "DEFAULT_SCHEMA_CLASS": "core.openapi.ScopedAutoSchema",
    "EXCEPTION_HANDLER": "core.errors.exception_handler",
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_FILTER_BACKENDS": [],
    "DATETIME_FORMAT": "%Y-%m-%dT%H:%M:%S.%fZ",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "apiscope API",
    "DESCRIPTION": (
        "API discovery and security testing service: endpoint inventory, sensitive-data "
        "classification, alerts, webhooks and security test generation. Every route takes "
        "the raw API key in the `Authorization` header."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": r"/api/v[12]",
    # One component per shared enumeration (riskScore and a data class's severity share RiskScore).
    "ENUM_NAME_OVERRIDES": {
        "RiskScoreEnum": "core.enums.RiskScore",
        "AlertTypeEnum": "core.enums.AlertType",
        "AlertStatusEnum": "core.enums.AlertStatus",
        "DataSectionEnum": "core.enums.DataSection",
        "HttpMethodEnum": "core.enums.HttpMethod",
    },
    # 401/403/400/413/415/503 answers every route shares, added to each operation (core/schema.py).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "core.schema.postprocess_common_responses",
    ],
}

# --- Static files, i18n, auth -------------------------------------------
STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=10 * 1024 * 1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024

# --- Product switches -----------------------------------------------------
# Webhook targets on loopback/private/link-local addresses are refused unless
# the operator turns this on (SSRF guard).
WEBHOOK_ALLOW_PRIVATE_TARGETS = env.bool("WEBHOOK_ALLOW_PRIVATE_TARGETS", default=False)
# Deliveries of one webhook in flight at once, across every worker process and thread (DECISIONS §7
# pacing): a burst of alerts queues behind them instead of flooding the receiver past the 250 ms
# budget. Read through webhooks.policy.max_in_flight().
WEBHOOK_MAX_IN_FLIGHT = env.int("WEBHOOK_MAX_IN_FLIGHT", default=4)
# Key for encrypting secrets at rest (testing environment authToken). Derived
# from SECRET_KEY when unset.
FIELD_ENCRYPTION_KEY = env.str("FIELD_ENCRYPTION_KEY", default="")
# Encrypted agent traces (core/agentkeys.py, DECISIONS §9). The service's RSA key pair is made on
# first use with AGENT_KEY_BITS (every encrypted trace costs one RSA decryption: bench/decrypt.py); its private key is stored encrypted with AGENT_KEY_ENCRYPTION_KEY
# (comma-separated, the first encrypts, every entry decrypts; empty: FIELD_ENCRYPTION_KEY, then
# SECRET_KEY). AGENT_GLOBAL_FULL_TRACE_CAPTURE is agent-config's globalFullTraceCapture (agents
# send encrypted full traces of every endpoint); AGENT_CONFIG_MAX_ENDPOINTS bounds its endpoints.
AGENT_KEY_BITS = env.int("AGENT_KEY_BITS", default=2048)
AGENT_KEY_ENCRYPTION_KEY = env.str("AGENT_KEY_ENCRYPTION_KEY", default="")
AGENT_GLOBAL_FULL_TRACE_CAPTURE = env.bool("AGENT_GLOBAL_FULL_TRACE_CAPTURE", default=False)
AGENT_CONFIG_MAX_ENDPOINTS = env.int("AGENT_CONFIG_MAX_ENDPOINTS", default=10_000)
if AGENT_KEY_BITS not in (2048, 3072, 4096) or AGENT_CONFIG_MAX_ENDPOINTS < 0:
    raise ImproperlyConfigured("AGENT_KEY_BITS must be 2048, 3072 or 4096; AGENT_CONFIG_MAX_ENDPOINTS at least 0.")
# Security test generation (testgen): delay of time-based SQL injection payloads
# (seconds), size of the rate-limit burst, most inputs one test fuzzes.
TESTGEN_SQLI_DELAY_SECONDS = env.int("TESTGEN_SQLI_DELAY_SECONDS", default=3)
TESTGEN_RATE_LIMIT_BURST = env.int("TESTGEN_RATE_LIMIT_BURST", default=50)
TESTGEN_MAX_INPUTS = env.int("TESTGEN_MAX_INPUTS", default=10)
# Stored generated tests of a host whose stamps were checked this many seconds ago, with the inventory
# version unchanged since, are served without checking again (0: check on every call). Traffic that
# changes no endpoint or field shows in generated tests after at most this long. testgen/services/stored.py
TESTGEN_STORED_RECHECK_SECONDS = env.float("TESTGEN_STORED_RECHECK_SECONDS", default=1.0)
# Longest the offline search for a test user's weak JWT secret may take, per token (seconds): the
# bundled list, the target's words, then every number of up to 6 digits (testgen/jwt.py).
TESTGEN_JWT_CRACK_SECONDS = env.float("TESTGEN_JWT_CRACK_SECONDS", default=30.0)
# Longest a test run may take in the worker (seconds); a run still RUNNING past it is closed FAILED.
TESTGEN_RUN_TIME_LIMIT = env.int("TESTGEN_RUN_TIME_LIMIT", default=3600)
# Environment variables that {{env.NAME}} placeholders may read, only in runs of
# manage.py run_security_tests (comma-separated names; none by default). Runs
# started through the API never read any.
TESTING_ENV_ALLOWLIST = env.list("TESTING_ENV_ALLOWLIST", default=[])
# Loopback/private/link-local/metadata targets security tests may reach
# (comma-separated host names and IPs/CIDRs; none by default). The service's own
# database and broker stay refused even when listed (testgen.targets).
TESTING_ALLOWED_TARGETS = env.list("TESTING_ALLOWED_TARGETS", default=[])
# Ingestion backpressure: above this many traces waiting for analysis the
# ingestion routes answer 503 with Retry-After.
INGEST_MAX_BACKLOG = env.int("INGEST_MAX_BACKLOG", default=200_000)
# Expected analysis throughput (traces/s), used to compute the 503's Retry-After.
INGEST_DRAIN_RATE = env.int("INGEST_DRAIN_RATE", default=2000)
# A batch still PENDING this many seconds after it was accepted (or last re-sent)
# gets its Celery message sent again (lost-message recovery).
INGEST_REQUEUE_AFTER = env.int("INGEST_REQUEUE_AFTER", default=120)
# Under a backlog a worker analyses several pending batches together, up to this
# many traces, sharing the per-batch queries (throughput rises with the load).
# 500: ~35 KB of Python objects per trace analysed together; a worker child keeps its peak (bench/README.md "Worker memory").
INGEST_COALESCE_TRACES = env.int("INGEST_COALESCE_TRACES", default=500)
# What one trace's analysis may spend (inventory/ingest/pipeline.py, core/budget.py): CPU milliseconds,
# besides its nodes, characters and validator candidates; over it the trace is analysed partially
# (counted as truncated on the health page).
INGEST_TRACE_CPU_MS = env.float("INGEST_TRACE_CPU_MS", default=40.0)
# Hard time limit (seconds) of an analysis task: past it the worker process is killed, the rows it
# held are analysed alone afterwards and a row that kills its worker alone is quarantined. The soft
# limit (SoftTimeLimitExceeded, the analysis given up and dealt with the same way) comes first; 0: none.
# The limits travel in each task's message: give the web and the workers the same values.
INGEST_ANALYSIS_TIME_LIMIT = env.int("INGEST_ANALYSIS_TIME_LIMIT", default=180)
INGEST_ANALYSIS_SOFT_TIME_LIMIT = env.int("INGEST_ANALYSIS_SOFT_TIME_LIMIT", default=150)
# Single-trace posts send no Celery message each: a web process sends one drain task per this
# many seconds (countdown of the same length), which analyses every pending single trace in
# batches (inventory/ingest/drain.py). Longer: fewer, bigger analyses; shorter: sooner listed.
INGEST_DRAIN_WINDOW = env.float("INGEST_DRAIN_WINDOW", default=0.3)
# Learned parameterisation (DECISIONS §9, inventory/learning.py): literal endpoints of one family
# (/users/v1/alice, /users/v1/bob, ...) are merged into one parameterised endpoint once the evidence
# is strong enough. Off: literals stay (suggested-paths still offers the patterns).
PATH_LEARNING = env.bool("PATH_LEARNING", default=True)
# Retention of stored traces (the newest 100 per endpoint are kept, none older than this).
TRACE_RETENTION_DAYS = env.int("TRACE_RETENTION_DAYS", default=7)
# Generated OpenAPI specs (docs/openapi.md): seconds between a host's inventory change and its
# rebuild (changes meanwhile share it), newest stored traces sampled per endpoint, and how often
# (seconds) a host with traffic but no inventory change is rebuilt for its sampled details.
OPENAPI_GENERATE_DEBOUNCE = env.float("OPENAPI_GENERATE_DEBOUNCE", default=60.0)
OPENAPI_GENERATE_SAMPLE_TRACES = env.int("OPENAPI_GENERATE_SAMPLE_TRACES", default=10)
OPENAPI_GENERATE_MAX_AGE = env.float("OPENAPI_GENERATE_MAX_AGE", default=3600.0)
# List totals (X-Total-Count, hosts' endpoint counts) whose count took at least
# INVENTORY_COUNT_CACHE_MIN_MS are reused until the inventory changes, for at most
# INVENTORY_COUNT_CACHE_SECONDS (0 turns the cache off). See inventory/counts.py.
INVENTORY_COUNT_CACHE_SECONDS = env.int("INVENTORY_COUNT_CACHE_SECONDS", default=30)
INVENTORY_COUNT_CACHE_MIN_MS = env.float("INVENTORY_COUNT_CACHE_MIN_MS", default=5.0)
# Whole answers of GET /endpoints and GET /hosts are reused for this many seconds at the same
# inventory version (0 turns it off). See inventory/counts.py.
INVENTORY_PAGE_CACHE_SECONDS = env.float("INVENTORY_PAGE_CACHE_SECONDS", default=1.0)
# An API key's lookup is reused for this many seconds in each web process: a revoked or
# re-scoped key takes effect within it. Capped at 1 s (docs/inventory.md). See core/authentication.py.
API_KEY_CACHE_SECONDS = min(env.float("API_KEY_CACHE_SECONDS", default=1.0), 1.0)


# --- Detection ----------------------------------------------------------------
# Phone numbers written without "+" and a country code are tried as national numbers of these
# regions, in order (ISO 3166 codes phonenumbers knows: "US", "GB", "DE"...). DECISIONS §5.
PHONE_REGIONS = [region.strip().upper() for region in env.list("PHONE_REGIONS", default=["US"]) if region.strip()]


def phone_regions_check(regions: list[str]) -> None:
    """Raises ``ImproperlyConfigured`` (the process does not start) for an empty list or a code
    phonenumbers does not know, naming it."""
    import phonenumbers

    if not regions:
        raise ImproperlyConfigured("PHONE_REGIONS is empty. Give at least one region code, e.g. US.")
    unknown = [region for region in regions if region not in phonenumbers.SUPPORTED_REGIONS]
    if unknown:
        raise ImproperlyConfigured(f"PHONE_REGIONS: unknown region code(s) {', '.join(unknown)} (e.g. US, GB, DE).")


phone_regions_check(PHONE_REGIONS)

# --- Admin login throttling (django-axes) ------------------------------------
# ADMIN_LOGIN_FAILURE_LIMIT failed admin logins for one username from one client address lock
# that pair out for ADMIN_LOGIN_COOLOFF_MINUTES (python manage.py axes_reset lifts every lock).
# The API's key authentication is no login: it never counts here and is never locked out.
ADMIN_LOGIN_FAILURE_LIMIT = env.int("ADMIN_LOGIN_FAILURE_LIMIT", default=5)
ADMIN_LOGIN_COOLOFF_MINUTES = env.int("ADMIN_LOGIN_COOLOFF_MINUTES", default=15)
# Reverse proxies in front of the service whose X-Forwarded-For entries are believed; 0: the
# header is ignored and the connecting address is the client's (core/admin_login.py).
ADMIN_LOGIN_TRUSTED_PROXIES = env.int("ADMIN_LOGIN_TRUSTED_PROXIES", default=0)
if ADMIN_LOGIN_FAILURE_LIMIT < 1 or ADMIN_LOGIN_COOLOFF_MINUTES < 1 or ADMIN_LOGIN_TRUSTED_PROXIES < 0:
    raise ImproperlyConfigured(
        "ADMIN_LOGIN_FAILURE_LIMIT and ADMIN_LOGIN_COOLOFF_MINUTES must be at least 1, "
        "ADMIN_LOGIN_TRUSTED_PROXIES at least 0."
    )
INSTALLED_APPS.append("axes")
MIDDLEWARE.append("axes.middleware.AxesMiddleware")  # last, as django-axes requires
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = ADMIN_LOGIN_FAILURE_LIMIT
AXES_COOLOFF_TIME = timedelta(minutes=ADMIN_LOGIN_COOLOFF_MINUTES)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True  # a successful login forgets the failures before it
# The cool-off runs from the lock: attempts during it are refused without extending it.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_CLIENT_IP_CALLABLE = "core.admin_login.client_ip"
AXES_LOCKOUT_CALLABLE = "core.admin_login.lockout_response"
# Masked in django-axes' log lines and stored attempts (the password always is).
AXES_SENSITIVE_PARAMETERS = ["username", "ip_address", "csrfmiddlewaretoken"]

# --- Regular expressions written by users (core/userregex.py) ------------
# Custom data classes' value/key regexes and uploaded OpenAPI specs' patterns run on
# RE2 (linear time), or, for patterns RE2 refuses (lookaround, backreferences), on the
# `regex` module with this timeout per search; every input is cut to this many characters.
USER_REGEX_MAX_INPUT = env.int("USER_REGEX_MAX_INPUT", default=4096)
USER_REGEX_TIMEOUT_MS = env.int("USER_REGEX_TIMEOUT_MS", default=20)

LOG_LEVEL = env.str("LOG_LEVEL", default="INFO")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "core.middleware.RequestIdLogFilter"}},
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "plain",
            "filters": ["request_id"],
        },
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django.request": {"level": "ERROR"},
        "django.db.backends": {"level": "WARNING"},
    },
}
