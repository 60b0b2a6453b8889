"""Credentials in traffic: which headers, parameters and fields carry them (DECISIONS §4).

Used four ways: to decide whether a request was authenticated
(``isAuthenticatedDetected``), to spot Basic authentication, to redact the
credential channel of a batch as it is accepted (``staging.py``), and to redact
credentials from stored traces (and mask them for read keys, ``core/masking.py``)
whatever the endpoint's trace-capture setting.

Two notions, deliberately distinct:

* *counts as authentication* — ``AUTH_HEADERS`` and ``AUTH_QUERY_PARAMS``, the
  credential channel of DECISIONS §4 (Authorization, cookies, API-key headers and
  query parameters). Every name there is also redacted.
* *is redacted* — :func:`is_credential_name` (one rule for JSON keys, form fields,
  multipart part names, GraphQL arguments, ``key=value`` text and the extra
  keys of the testing environment), plus, per channel, :func:`is_credential_header`
  and :func:`is_credential_param`. These are wider than the authentication lists on
  purpose: ``Idempotency-Key``, ``X-CSRF-Token`` or an OAuth ``code=`` are
  redacted, but an unauthenticated request carrying one must still make the
  endpoint ``isAuthenticatedDetected: false``.

Names are compared as the server would read them (:func:`credential_key`):
JSON escapes already decoded by the parser (``"\u0070assword"`` is
``password``), percent-escapes decoded, Unicode compatibility forms folded
(NFKC: fullwidth ``ｐａｓｓｗｏｒｄ``), case-folded.
"""
from __future__ import annotations

import math
import re
import unicodedata
from functools import lru_cache
from urllib.parse import unquote

REDACTED = "[REDACTED]"

# Where the names below come from: the OWASP cheat sheets (Session Management: the frameworks'
# session-id names; Authentication, Password Storage, Multifactor Authentication, Secrets Management),
# RFC 6749 / 6750 / 7636 / 7523 (OAuth 2.0: access_token, code, code_verifier, client_secret,
# client_assertion, assertion, refresh_token, id_token), OAuth 1.0a (oauth_token, oauth_verifier,
# oauth_signature), SAML 2.0 bindings (SAMLResponse), CAS (ticket), RFC 6238 / 4226 (TOTP/HOTP
# secrets and seeds), BIP-39 wallets (mnemonic, seed phrase), and the vendors' own documentation for
# signed URLs (AWS SigV4 X-Amz-Signature / X-Amz-Security-Token, Azure SAS sig, CloudFront Signature).

# Headers that authenticate a request (the credential channel; compared on credential_key).
# ``Authentication`` is not standard HTTP, but APIs use it in place of Authorization.
AUTH_HEADERS = frozenset({
    "authorization", "proxy-authorization", "authentication", "cookie",
    "x-api-key", "api-key", "apikey", "x-apikey", "x-auth-token", "x-access-token", "x-token",
    "x-session-token", "x-amz-security-token", "x-goog-api-key", "ocp-apim-subscription-key", "x-key",
})
# Query parameters that authenticate a request (the credential channel; compared on credential_key).
AUTH_QUERY_PARAMS = frozenset({
    "api_key", "apikey", "api-key", "key", "access_token", "token", "auth", "auth_token", "session_token",
    "x-api-key", "client_secret", "sig", "signature", "authkey", "auth_key", "sid", "session", "sessionid",
    "session_id", "jwt", "oauth_token", "x-amz-security-token", "x-amz-signature",
})
# Query parameters redacted that do not authenticate the request itself: the OAuth authorization
# code (``?code=``, exchanged for a token) would otherwise count a callback as authenticated; CAS
# service tickets and SAML assertions are exchanged likewise; OAuth 1.0a verifiers, PKCE verifiers.
REDACTED_ONLY_QUERY_PARAMS = frozenset({"code", "ticket", "samlresponse", "samlart", "oauth_verifier",
                                        "code_verifier", "client_assertion", "assertion", "id_token",
                                        "refresh_token", "logintoken"})
# Headers redacted that do not authenticate the request: the test-run marker (DECISIONS §8).
REDACTED_ONLY_HEADERS = frozenset({"x-apiscope-test"})
# Headers of the form "<scheme> <credentials>": redaction keeps a known scheme word
# (``Bearer [REDACTED]``), so Basic authentication and the header's shape stay known.
SCHEME_HEADERS = frozenset({"authorization", "proxy-authorization", "authentication"})
AUTH_SCHEMES = frozenset({
    "basic", "bearer", "digest", "negotiate", "ntlm", "token", "hoba", "mutual", "oauth", "dpop", "hawk",
    "jwt", "apikey", "api-key", "aws4-hmac-sha256", "scram-sha-1", "scram-sha-256", "vapid", "gnap",
})

# Field names (JSON keys, form and query names, GraphQL arguments) whose values are credentials.
# Compared on the compact name (:func:`_compact`): case-folded, "-", "_", "." and spaces removed.
_CREDENTIAL_WORDS = ("password", "passwd", "passphrase", "secret", "token", "apikey", "accesskey",
                     "privatekey", "credential", "authorization", "authentication", "sessionid", "cookie",
                     "signature", "mnemonic", "seedphrase", "seedwords", "recoverycode", "recoveryphrase",
                     "recoverykey", "backupcode", "totpseed", "totpkey", "otpseed", "otpkey", "mfaseed",
                     "securityanswer", "samlresponse")
# Ordinary words containing a credential word: removed before the word test (``tokenizer``, ``secretary``).
_BENIGN_WORDS = ("tokeniz", "tokenis", "secretar")
# (``sid``, ``ticket``, ``session`` are credentials in a URL's query, where they are listed above; in a
# body they are usually ids and objects: Twilio's ``sid``, a help desk's ``ticket``.)
_CREDENTIAL_EXACT = frozenset({"pwd", "pw", "pass", "passcode", "otp", "pin", "cvv", "cvc", "sig", "auth", "hmac",
                               "totp", "hotp", "authkey"})
# After an ``x`` extension prefix (``X-Key``, ``xKey``, ``X-Pass``) these are credentials too; a bare
# ``key`` field is usually a dictionary key and is not.
_X_EXACT = _CREDENTIAL_EXACT | {"key"}
# Header-name tokens (split on "-"/"_") that make a custom header a credential header.
_HEADER_TOKENS = frozenset({"key", "auth", "session", "jwt"})
# Every credential name (compact) contains one of these: a text without any (lower-cased, ASCII,
# no escapes) holds no credential name, so the field walk and the named patterns can be skipped.
CREDENTIAL_HINTS = ("pass", "pw", "secret", "token", "key", "credential", "auth", "session", "cookie", "sig",
                    "otp", "pin", "cvv", "cvc", "hmac", "sid", "ticket", "mnemonic", "seed", "recovery", "backupcode",
                    "saml", "answer")
_SEPARATORS = str.maketrans("", "", "-_. ")
# ``key[]``, ``key[0]`` → ``key``; ``user[password]`` → ``password`` (form and query array syntax).
_BRACKETS = re.compile(r"^(.*?)\[([^\[\]]{0,64})\]$")


@lru_cache(maxsize=16384)
def credential_key(name: str) -> str:
    """A header, parameter or field name as compared with the credential lists: percent-escapes
    decoded, NFKC-folded, case-folded, stripped (JSON escapes were decoded by the JSON parser);
    a trailing array subscript names the field it belongs to (``key[]``, ``key[0]`` → ``key``,
    ``user[password]`` → ``password``)."""
    if "%" in name:
        name = unquote(name)
    if not name.isascii():
        name = unicodedata.normalize("NFKC", name)
    name = name.strip().casefold()
    for _ in range(2):  # bounded: key[0][] → key
        match = _BRACKETS.match(name) if name.endswith("]") else None
        if match is None:
            break
        inner = match.group(2).strip()
        name = match.group(1).strip() if not inner or inner.isdigit() else inner
    return name


def _compact(name: str) -> str:
    return credential_key(name).translate(_SEPARATORS)


def may_hold_credential_names(text: str) -> bool:
    """False only when no key, field or argument in ``text`` can be a credential name (cheap
    substring tests; escapes, percent-escapes and non-ASCII text always answer True)."""
    if "\\u" in text or "%" in text or not text.isascii():
        return True
    lowered = text.lower()
    return any(hint in lowered for hint in CREDENTIAL_HINTS)


# Header-name token sets (split on "-"/"_") that name an authentication header beyond the fixed list:
# ``Authorization-Token``, ``X-Authorization``, ``X-Authentication``, ``X-Custom-Auth-Token``,
# ``X-Tenant-Api-Key``, ``X-User-Access-Token``, ``Session-Token``, ``X-Id-Token``.
_AUTH_HEADER_TOKEN_SETS = (
    frozenset({"authorization"}), frozenset({"authentication"}), frozenset({"auth", "token"}),
    frozenset({"auth", "key"}), frozenset({"access", "token"}), frozenset({"api", "key"}), frozenset({"apikey"}),
    frozenset({"session", "token"}), frozenset({"id", "token"}), frozenset({"bearer"}),
)
# Anti-forgery headers are held by anonymous visitors as well: never authentication.
_NOT_AUTH_HEADER_TOKENS = frozenset({"csrf", "xsrf"})


@lru_cache(maxsize=8192)
def is_auth_header(name: str) -> bool:
    """A header of the credential channel: ``AUTH_HEADERS``, or a custom header whose name says it
    carries the request's credential (``Authorization-Token``, ``X-Authentication``,
    ``X-Custom-Auth-Token``, ``X-Tenant-Api-Key``). Anti-forgery headers (``X-CSRF-Token``) and
    headers that merely mention a session or a key (``X-Session-Id``, ``Idempotency-Key``) are not."""
    key = credential_key(name)
    if key in AUTH_HEADERS:
        return True
    tokens = frozenset(key.replace("_", "-").split("-"))
    if tokens & _NOT_AUTH_HEADER_TOKENS:
        return False
    return any(wanted <= tokens for wanted in _AUTH_HEADER_TOKEN_SETS)


def is_auth_param(name: str) -> bool:
    """A query parameter of the credential channel (``AUTH_QUERY_PARAMS``)."""
    return credential_key(name) in AUTH_QUERY_PARAMS


@lru_cache(maxsize=8192)
def is_credential_header(name: str) -> bool:
    """A header redacted in stored traces and masked for read keys: the credential channel
    (``AUTH_HEADERS``), names that are credential names (:func:`is_credential_name`: ``X-Pass``,
    ``X-CSRF-Token``, ``X-Session-Id``) and custom headers with a ``key``, ``auth``, ``session`` or
    ``jwt`` token (``X-Key``, ``X-Auth-User``, ``Idempotency-Key``). ``X-Client-Id``, ``X-Author``,
    ``X-Keyword`` are not. Only ``AUTH_HEADERS`` counts as authentication."""
    key = credential_key(name)
    if key in AUTH_HEADERS or key in REDACTED_ONLY_HEADERS or is_credential_name(key):
        return True
    return any(token in _HEADER_TOKENS for token in key.replace("_", "-").split("-"))


@lru_cache(maxsize=16384)
def is_credential_name(name: str) -> bool:
    """Whether a body field, form field, multipart part, GraphQL argument or query parameter of
    this name holds a credential: an exact short name (``pass``, ``pwd``, ``pin``, ``otp``, ``cvv``,
    ``sig``, ``hmac``…, also after an ``x`` prefix, where ``key`` counts too: ``xKey``, ``X-Pass``)
    or a name containing a credential word (``password``, ``secret``, ``token``, ``apiKey``,
    ``credentials``, ``sessionid``…) other than inside an ordinary word (``tokenizer``,
    ``secretary``). ``keyword``, ``monkey``, ``passenger``, ``author`` are not credentials."""
    compact = _compact(name)
    if compact in _CREDENTIAL_EXACT or (compact[:1] == "x" and compact[1:] in _X_EXACT):
        return True
    for benign in _BENIGN_WORDS:
        if benign in compact:
            compact = compact.replace(benign, "")
    return any(word in compact for word in _CREDENTIAL_WORDS)


def is_credential_param(name: str) -> bool:
    """A query parameter redacted in stored traces and masked in URLs: the credential channel,
    credential names and ``REDACTED_ONLY_QUERY_PARAMS`` (``code``)."""
    return is_auth_param(name) or is_credential_name(name) or credential_key(name) in REDACTED_ONLY_QUERY_PARAMS


def credential_redact(name: str, value: str) -> str:
    """The redacted form of a credential header's value: ``Bearer [REDACTED]`` for a known scheme
    in an Authorization-type header; a ``Cookie`` header keeps its cookies' names
    (``lang=[REDACTED]; sessionid=[REDACTED]``, DECISIONS §4); else ``[REDACTED]``. Idempotent."""
    key = credential_key(name)
    if key == "cookie":
        return cookie_redact(value)
    if key in SCHEME_HEADERS:
        word, sep, rest = value.strip().partition(" ")
        if sep and rest.strip() and word.lower() in AUTH_SCHEMES:
            return f"{word} {REDACTED}"
    return REDACTED


def request_has_credentials(headers: list[tuple[str, str]], query: list[tuple[str, str]],
                            credential_cookies: frozenset | set | tuple = ()) -> bool:
    """An ``Authorization`` header, a credential cookie (:func:`cookie_header_has_credential`;
    ``credential_cookies``: names found credentials by their values before redaction), an API-key
    header or an API-key query parameter. Consent, language or analytics cookies alone are none."""
    for name, value in headers:
        if value and is_auth_header(name):
            if credential_key(name) == "cookie" and not cookie_header_has_credential(value, credential_cookies):
                continue
            return True
    for name, value in query:
        if value and is_auth_param(name):
            return True
    return False


def names_have_credentials(header_names, query_names) -> bool:
    """The same test on names only (v2 agents report names, not values)."""
    return any(is_auth_header(n) for n in header_names) or any(is_auth_param(n) for n in query_names)


# --------------------------------------------------------------------------- cookies (DECISIONS §4)
# Only credential cookies authenticate a request. Names are compared as :func:`credential_key` reads
# them, then on their compact form (separators "-", "_", ".", ":" and spaces removed).
#
# Never credentials, whatever their value: consent managers (Osano/cookieconsent, OneTrust, Cookiebot,
# IAB TCF, CookieYes, Complianz, iubenda, Didomi), language, locale, theme and banner state,
# analytics and advertising (Google Analytics and Ads, Segment, Amplitude, Mixpanel, Hotjar, Matomo,
# Heap, HubSpot, Microsoft Clarity and Bing, Azure Application Insights, Datadog RUM, Meta, LinkedIn,
# TikTok, Pinterest, Reddit, VWO, Optimizely, Intercom's messenger), CDN and bot management
# (Cloudflare, AWS load-balancer stickiness), fraud signals (Stripe.js) and anti-CSRF tokens, which
# an anonymous visitor holds as well.
_NON_CREDENTIAL_COOKIES = frozenset(
    """
    cookieconsentstatus cookieconsentdismissed cookieconsent cookiesaccepted cookieaccepted cookienotice
    optanonconsent optanonalertboxclosed euconsent euconsentv2 usprivacy addtl_consent addtlconsent
    gdpr gdprconsent consent consentuuid didomitoken borlabscookie cookieyesconsent
    lang language locale i18nredirected djangolanguage nextlocale wpwpmlcurrentlanguage googtrans
    currency country region timezone tz theme colorscheme colormode darkmode prefersdarkmode mode
    bannerdismissed hidebanner announcementdismissed seencookiemessage noticedismissed sidebarcollapsed
    ga gid gat gclau gclaw gcldc fbp fbc hjid hjfirstseen hjincludedinsessionsample hjabsolutesessioninprogress
    clck clsk muid uetsid uetvid ajsanonymousid ajsuserid ajsgroupid aiuser aisession dds
    hstc hubspotutk hssc hssrc ttp ttenablecookie pinunauth scid rdtuuid lisugr bcookie bscookie lidc
    optimizelyenduserid stripemid stripesid cfbm cfuvid cfclearance cfduid cflb awsalb awsalbcors awsalbtg
    awsalbtgcors csrftoken csrf csrftokenv xsrftoken xsrf requestverificationtoken antiforgery
    """.replace("_", "").split()
)
# Families of such cookies, by the start of their lower-cased name (per-property or per-project
# names: ``_ga_<id>``, ``_hjSessionUser_<site>``, ``mp_<token>_mixpanel``, ``intercom-session-<app>``,
# ``_pk_ses.<site>``): analytics "sessions" and ids, not logins.
_NON_CREDENTIAL_PREFIXES = ("cookielawinfo", "cmplz_", "_iub_cs", "optanon", "_ga_", "_gat_", "_gcl_", "_hj", "_pk_",
                            "__utm", "amp_", "mp_", "intercom-", "_hp2_", "_dc_gtm_", "ajs_", "_uet", "_vwo",
                            "__hs", "_fs_", "mkto_", "_mkto_", "visitor_id", "_clsk", "_clck", "_dd_s",
                            ".aspnetcore.antiforgery", ".aspnetcore.culture", ".aspnetcore.consent")
# Cookie names whose compact form holds one of these are about consent or forgery, never a login.
_NON_CREDENTIAL_PARTS = ("consent", "csrf", "xsrf", "antiforgery", "gdpr")
# Credential cookies named by frameworks and identity providers (compact names): PHP, Java EE,
# ASP.NET and ASP.NET Core, ColdFusion, Express/Connect, Koa, Sails, Laravel, CodeIgniter, Django,
# Flask, Rack, Devise, Auth0, Keycloak, mod_auth_openidc, oauth2-proxy, Google, LinkedIn, GitHub.
_CREDENTIAL_COOKIES = frozenset(
    """
    sid sess session sessionid sessid phpsessid jsessionid aspnetsessionid aspxauth aspnetcorecookies
    aspnetcoresession aspnetcoreidentityapplication cfid cftoken connectsid expresssid expresssess koasess
    sailssid laravelsession cisession racksession appsession keycloakidentity keycloakidentitylegacy
    keycloaksession keycloaksessionlegacy authsessionid modauthopenidcsession oauth2proxy sapisid apisid
    hsid ssid secure3psid secure1psid liat usersession token auth jwt accesstoken idtoken refreshtoken
    authtoken remembertoken rememberusertoken rememberme
    """.split()
)
# Families of credential cookies by the start of their compact name: AWS ALB authentication,
# WordPress, classic ASP, Laravel's remember-me, NextAuth/Auth.js (``__Secure-next-auth.session-token``).
_CREDENTIAL_COOKIE_PREFIXES = ("awselbauthsessioncookie", "wordpressloggedin", "wordpresssec", "aspsessionid",
                               "rememberweb",
                               "nextauthsessiontoken", "securenextauthsessiontoken", "hostnextauth",
                               "authjssessiontoken", "secureauthjssessiontoken")
# Drupal's session cookie: SESS or SSESS (HTTPS) and a 32-hex hash of the site.
_DRUPAL_SESSION = re.compile(r"^s?sess[0-9a-f]{32}$")
# Tokens of a cookie name (split on separators and camelCase humps) that make it a credential cookie:
# ``my_app_session``, ``user-token``, ``AuthToken``, ``X-Session``, ``app.sid``.
_CREDENTIAL_COOKIE_TOKENS = frozenset({"session", "sess", "sid", "sessid", "sessionid", "token", "auth", "jwt",
                                       "authtoken", "accesstoken", "apikey", "credential", "credentials",
                                       "identity", "secret", "password", "passwd"})
_COOKIE_SEPARATORS = str.maketrans("", "", "-_.: ")
_NAME_TOKENS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
# Token-shaped values: a JWT (optionally behind a framework's ``s:`` signing prefix), or a long string
# of a token alphabet with enough entropy (``MIN_TOKEN_LENGTH`` characters or more).
_JWT_VALUE = re.compile(r"^(?:s:)?eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*$")
_TOKEN_VALUE = re.compile(r"^[A-Za-z0-9+/=_\-.~%:!*]+$")
_UUID_VALUE = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$")
MIN_TOKEN_LENGTH = 32
MIN_TOKEN_ENTROPY = 3.5  # bits per character: hex tops out at 4, base64 at 6; English text ~2.5-3


@lru_cache(maxsize=8192)
def cookie_name_kind(name: str) -> bool | None:
    """True for a credential cookie's name, False for a name that is never one (consent, language,
    theme, banner state, analytics, CDN, anti-CSRF), None when only the value's shape can tell."""
    key = credential_key(name)
    compact = key.translate(_COOKIE_SEPARATORS)
    if not compact:
        return None
    if compact in _NON_CREDENTIAL_COOKIES or any(part in compact for part in _NON_CREDENTIAL_PARTS):
        return False
    if compact in _CREDENTIAL_COOKIES or compact.startswith(_CREDENTIAL_COOKIE_PREFIXES) or \
            _DRUPAL_SESSION.match(compact):
        return True
    if key.startswith(_NON_CREDENTIAL_PREFIXES):
        return False
    raw = name if name.isascii() and "%" not in name else key
    tokens = {token.lower() for token in _NAME_TOKENS.findall(raw)}
    if tokens & _CREDENTIAL_COOKIE_TOKENS or any(word in compact for word in ("session", "sessid", "jwt")):
        return True
    return None


def _entropy(value: str) -> float:
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


@lru_cache(maxsize=8192)
def is_token_shaped(value: str) -> bool:
    """A JWT, or a long random-looking string of a token alphabet: ``MIN_TOKEN_LENGTH`` characters or
    more, at least ``MIN_TOKEN_ENTROPY`` bits per character, and classes mixed as random tokens mix
    them (a tenth or more digits among letters, or of both cases). A UUID is not (anonymous visitor
    ids are UUIDs), nor a long number, nor words joined by dashes (``dark-mode-compact-sidebar-v2``)."""
    value = value.strip().strip('"')
    if "%" in value:
        value = unquote(value)
    if _JWT_VALUE.match(value):
        return True
    if len(value) < MIN_TOKEN_LENGTH or len(value) > 8192 or not _TOKEN_VALUE.match(value) or _UUID_VALUE.match(value):
        return False
    total = len(value)
    lower = sum(c.islower() for c in value) / total
    upper = sum(c.isupper() for c in value) / total
    digits = sum(c.isdigit() for c in value) / total
    mixed = (digits >= 0.1 and lower + upper >= 0.1) or (lower >= 0.1 and upper >= 0.1)
    return mixed and _entropy(value) >= MIN_TOKEN_ENTROPY


def is_credential_cookie(name: str, value: str) -> bool:
    """Whether a cookie authenticates the request (DECISIONS §4, the one rule for ingestion, alerts,
    generated specs and test generation): a known non-credential name (consent, language, theme,
    banner state, analytics, CDN, anti-CSRF) never is, whatever its value; otherwise a session- or
    token-like name (``session``, ``sid``, ``token``, ``auth``, ``jwt``, ``connect.sid``,
    ``PHPSESSID``, ``JSESSIONID``, ``*_session``, ``*-token``…) or a token-shaped value (a JWT, a long
    high-entropy string) makes it one. An empty value is no credential; a redacted value
    (``[REDACTED]``) leaves the decision to the name."""
    if value is None or not str(value).strip():
        return False
    kind = cookie_name_kind(name)
    if kind is not None:
        return kind
    value = str(value)
    return value != REDACTED and is_token_shaped(value)


def cookie_pairs(header: str) -> list[tuple[str, str]] | None:
    """The ``(name, value)`` pairs of a ``Cookie`` header (``a=1; b=2``; a quoted value unquoted), or
    None when some part is not ``name=value`` (an agent that sent the header redacted or mangled)."""
    pairs = []
    for part in str(header).split(";"):
        part = part.strip()
        if not part:
            continue
        name, sep, value = part.partition("=")
        name = name.strip()
        if not sep or not name or len(name) > 256:
            return None
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        pairs.append((name, value))
    return pairs


def cookie_redact(header: str) -> str:
    """A ``Cookie`` header with every value redacted and the names kept (``a=[REDACTED]; b=[REDACTED]``);
    ``[REDACTED]`` when it is not ``name=value`` pairs. Idempotent."""
    pairs = cookie_pairs(header)
    if not pairs:
        return REDACTED
    return "; ".join(f"{name}={REDACTED}" for name, _ in pairs)


def cookie_header_credentials(header: str) -> list[str] | None:
    """The names of the credential cookies in a ``Cookie`` header (:func:`is_credential_cookie`), or None
    when the header cannot be read as cookies (then it is taken as a credential, as before names were
    kept: ``Cookie: [REDACTED]`` from an agent that redacts)."""
    pairs = cookie_pairs(header)
    if pairs is None:
        return None
    return [name for name, value in pairs if is_credential_cookie(name, value)]


def cookie_header_has_credential(header: str, known: frozenset | set | tuple = ()) -> bool:
    """Whether a ``Cookie`` header carries any credential cookie. ``known``: names already found to be
    credentials (by value shape, before the values were redacted), which count even when redacted.
    An empty header carries none; one that is not ``name=value`` pairs counts as a credential."""
    if header is None or not str(header).strip():
        return False
    pairs = cookie_pairs(header)
    if pairs is None:
        return str(header).strip() != ""
    return any(name in known and value.strip() or is_credential_cookie(name, value) for name, value in pairs)


def is_basic_auth(value: str | None) -> bool:
    return bool(value) and value.lstrip()[:6].lower() == "basic "


# Credentials inside free text (XML, HTML, NDJSON, invalid or too deeply nested JSON, multipart
# bodies, plain text). Named values are found by shape and kept when their name is a credential
# name (:func:`is_credential_name`): ``key=value``, ``key: value``, ``"key": "value"``,
# ``<key>value</key>`` and multipart parts ``name="key"``. Every pattern is linear: bounded
# repetitions and alternatives that cannot match the same character.
_NAMED_PATTERNS = (
    # key=value, key: value, "key": "value", \"key\": \"value\" (JSON inside a JSON string), key='v'
    re.compile(r"""(?<![\w.\[\]-])\\?["']?([A-Za-z_][\w.\[\]-]{0,63})\\?["']?[ \t]{0,16}[:=][ \t]{0,16}"""
               r"""(?:"((?:[^"\\\r\n]|\\.){0,4096})"|\\"((?:[^"\\\r\n]|\\[^"\r\n]){0,4096})\\"|'([^'\r\n]{0,4096})'"""
               r"""|([^"'&\s,;<>{}()\[\]\\][^"'&\s,;<>{}()\[\]]{0,4095}))"""),
    # <key attr="…">value</key>, <ns:key>value
    re.compile(r"<(?:[\w.-]{1,32}:)?([A-Za-z_][\w.-]{0,63})\b[^<>]{0,256}>([^<]{1,4096})"),
    # multipart: Content-Disposition: form-data; name="key"  … blank line … value
    re.compile(r"\bname=\"([^\"\r\n]{1,128})\"[^\r\n]{0,256}(?:\r?\n[^\r\n]{1,512}){0,8}\r?\n\r?\n([^\r\n]{1,4096})"),
)
# Credentials recognised by their own shape.
_TEXT_PATTERNS = (
    re.compile(r"(?i)(\b(?:bearer|basic|token)\s+)([A-Za-z0-9._~+/=-]{6,})"),
    re.compile(r"()(eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*)"),
    re.compile(r"()\b((?:AKIA|ASIA)[0-9A-Z]{16}|(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{10,}|gh[pousr]_[A-Za-z0-9]{30,}"
               r"|AIza[0-9A-Za-z_-]{35}|xox[abposre]-[0-9A-Za-z-]{10,})"),
    # the password of a URL's userinfo, any scheme: postgres://user:password@host
    re.compile(r"(?i)(\b[a-z][a-z0-9+.-]{0,31}://[^\s:/@?#]{0,256}:)([^\s/@?#]{1,256})(?=@)"),
)


def _named_sub(match: re.Match, nested: bool = False) -> str:
    """The match with its value group replaced by ``[REDACTED]`` (quotes kept) when its name is a
    credential name. Otherwise unchanged, except that a quoted value that itself holds named values
    (JSON inside a JSON string: ``"payload": "{\\"password\\": …}"``) is scrubbed once more."""
    group = next(g for g in range(2, (match.lastindex or 2) + 1) if match.group(g) is not None)
    if is_credential_name(match.group(1)):
        return group_replaced(match, group, REDACTED)
    value = match.group(group)
    if not nested and group <= 3 and len(value) > 6 and match.re is _NAMED_PATTERNS[0]:
        return group_replaced(match, group, _NAMED_PATTERNS[0].sub(_nested_sub, value))
    return match.group(0)


def group_replaced(match: re.Match, group: int, value: str) -> str:
    """The text of ``match`` with its ``group`` replaced by ``value``."""
    start, end = match.span(group)
    offset = match.start(0)
    return match.group(0)[:start - offset] + value + match.group(0)[end - offset:]


def _nested_sub(match: re.Match) -> str:
    return _named_sub(match, nested=True)


_JSON_ESCAPE = re.compile(r"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|\\u([0-9a-fA-F]{4})")


def _unescape(match: re.Match) -> str:
    if match.group(3):
        code = int(match.group(3), 16)
        # Control characters (NUL above all) and lone surrogates stay escaped: PostgreSQL stores neither.
        return match.group(0) if code < 0x20 or 0xD800 <= code <= 0xDFFF else chr(code)
    high, low = int(match.group(1), 16), int(match.group(2), 16)
    return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))


def scrub_text(text: str) -> tuple[str, bool]:
    """Replace credential-looking substrings of free text; returns (text, changed).

    JSON-style ``\\uXXXX`` escapes are decoded first (``\\u0070assword=…`` is a password):
    when something is replaced the decoded text is returned, scrubbed.
    """
    if "\\u" in text:
        decoded = _JSON_ESCAPE.sub(_unescape, text)
        if decoded != text:
            scrubbed, changed = _scrub(decoded)
            if changed:
                return scrubbed, True
    return _scrub(text)


def _scrub(text: str) -> tuple[str, bool]:
    changed = False
    for pattern in _NAMED_PATTERNS if may_hold_credential_names(text) else ():
        new = pattern.sub(_named_sub, text)
        if new != text:
            changed = True
            text = new
    for pattern in _TEXT_PATTERNS:
        new = pattern.sub(lambda m: m.group(1) + REDACTED, text)
        if new != text:
            changed = True
            text = new
    return text, changed


# --------------------------------------------------------------------------- credentials by route context
# A route that takes a credential in its URL: changing or resetting a password, logging in, verifying a
# PIN or one-time code. On such a route a query parameter with a neutral name (``old``, ``new``, ``p``)
# holding a password-shaped value is a password (DECISIONS §5: a password in the URL is data).
_CREDENTIAL_ROUTE = re.compile(
    r"(?:^|[/_.\-])(?:pass(?:word|wd)?s?|pwd|passcode|passphrase|log-?in|sign-?in|sign-?on|authenticate|"
    r"credentials?|reset|change-?pass(?:word)?|set-?pass(?:word)?|pin|otp|mfa|2fa|totp|unlock)(?:$|[/_.\-])",
    re.IGNORECASE)
# Names that are never the credential on such a route: who, where to go, how to answer.
_ROUTE_NEUTRAL_NAMES = frozenset(
    "user username userid user_id login email mail name account id uid lang locale format callback redirect "
    "redirect_uri redirecturl returnurl return_to returnto next continue state nonce scope response_type client_id "
    "page limit offset sort order fields expand include q query search t ts timestamp time v version".split())
_NOT_PASSWORD_VALUE = re.compile(
    r"^(?:\d{1,3}|true|false|yes|no|on|off|null|none|json|xml|html|[a-z]{2}(?:[-_][A-Za-z]{2})?"
    r"|\d{4}-\d{2}-\d{2}.*|[^@\s]+@[^@\s]+\.[^@\s]+|https?://.*)$", re.IGNORECASE)


def is_credential_route(path: str) -> bool:
    """A route whose requests carry a credential (password change or reset, login, PIN, one-time code)."""
    return bool(path) and _CREDENTIAL_ROUTE.search(path.split("?", 1)[0]) is not None


def is_password_shaped(value: str) -> bool:
    """A value that can be a password: 4 to 128 characters without spaces, not a small number, a flag,
    a format or language word, a date, an e-mail or a URL, and not ``[REDACTED]``."""
    value = value.strip()
    return (4 <= len(value) <= 128 and " " not in value and value != REDACTED
            and _NOT_PASSWORD_VALUE.match(value) is None)


def route_credential_params(path: str, query) -> list[str]:
    """The query parameters of a request that are credentials by route context and value shape: on a
    credential route (:func:`is_credential_route`), parameters not named like anything else
    (:data:`_ROUTE_NEUTRAL_NAMES`) whose value is password-shaped (:func:`is_password_shaped`).
    Parameters named like credentials are found by name already (:func:`is_credential_param`)."""
    if not query or not is_credential_route(path):
        return []
    found = []
    for name, value in query:
        key = credential_key(name)
        if value and key not in _ROUTE_NEUTRAL_NAMES and not is_credential_param(name) and is_password_shaped(
                str(value)):
            found.append(name)
    return found


# A query string inside a header value or any text: ``…?code=abc&token=xyz#frag`` (bounded, linear).
_URL_QUERY_PAIR = re.compile(r"([?&#;])([^=&#?\s;,\"'<>]{1,128})=([^&#\s;,\"'<>]{0,4096})")


def url_credentials_redact(text: str) -> tuple[str, bool]:
    """``text`` (a header value such as ``Location``, ``Referer`` or ``Link``, a string in a body) with the
    values of credential query parameters of the URLs in it redacted (:func:`is_credential_param`:
    ``?code=…&token=…``, ``access_token`` in a fragment), and URL userinfo passwords and known token
    shapes scrubbed (:func:`scrub_text`). Returns (text, changed)."""
    changed = False
    if "=" in text and any(mark in text for mark in "?#&;"):
        def pair(match: re.Match) -> str:
            nonlocal changed
            if match.group(3) and match.group(3) != REDACTED and is_credential_param(match.group(2)):
                changed = True
                return f"{match.group(1)}{match.group(2)}={REDACTED}"
            return match.group(0)

        text = _URL_QUERY_PAIR.sub(pair, text)
    scrubbed, more = scrub_text(text)
    return scrubbed, changed or more


def may_hold_secret_text(value: str) -> bool:
    """Cheap test: a string that may hold a credential inside free text (a ``key=value``, a URL with
    userinfo or a credential parameter, a Bearer token, a JWT, a known key prefix)."""
    if len(value) < 8:
        return False
    if "://" in value and ("@" in value or "?" in value):
        return True
    if "eyJ" in value or "earer " in value or "AKIA" in value or "sk_live_" in value or "ghp_" in value:
        return True
    return ("=" in value or ":" in value) and may_hold_credential_names(value)
