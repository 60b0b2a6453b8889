"""vAPI (PHP / Laravel 8 on MariaDB): a dozen small APIs under ``/vapi``, each with its own kind of
credential in an ``Authorization-Token`` header (base64 ``user:password``, a token from a login, an
API key from an OTP check, a JWT). The testing environment holds one credential per identity, so each
part is run with its own environment (``plan``), as an operator of apiscope would have to.

Left out of the traffic on purpose: ``/vapi/serversurfer`` (it fetches any URL the caller names:
replaying it would make this machine fetch outside addresses) and api7 (its flaw is CORS, which no
template looks at). api2 and api8 have no sign-up: the test accounts are rows the operator adds to
their tables (bench/realworld/README.md)."""
from __future__ import annotations

import base64

from common import Recorder


def basic(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode()


TEST = {"qa_alice": "QaAlice-pw-7", "qa_bob": "QaBob-pw-8"}
REAL = {"dwight_s": "Dwight-pw-1", "jim_h": "Jim-pw-2"}
API4_KEY_OTP = "1872"  # the OTP vAPI's api4 accepts (its Variables class), entered by the user from their phone


class Target:
    name = "vapi"
    tables = {"a_p_i1_users": "id", "a_p_i2_users": "email", "a_p_i3_users": "username", "a_p_i3_comments": "id",
              "a_p_i5_users": "username", "a_p_i6_users": "username", "a_p_i8_users": "username",
              "a_p_i9_users": "username", "justweaktokens": "id", "stickynotes": "id"}
    destructive = None

    def __init__(self):
        self.ids: dict[tuple[str, str], int] = {}  # (api, user) -> id
        self.api4_key = ""
        self.jwt: dict[str, str] = {}

    @property
    def test_users(self) -> set[str]:
        return {"qa_alice", "qa_bob", "qa.alice@example.org", "qa.bob@example.org"}

    @property
    def traffic_users(self) -> set[str]:
        return {"dwight_s", "jim_h", "michaels", "meredithp", "pambeese", "savanna48@ortiz.com",
                "hauck.aletha@yahoo.com", "harber.leif@beatty.info", "admin", "richardbranson", "roottusk",
                "baduser007"}

    def traffic_names(self) -> set[str]:
        return set(self.traffic_users)

    def traffic_paths(self) -> list[str]:
        """Paths of objects of users seen in traffic: every api1/api5 user id but the test identities'."""
        out = []
        for api in ("api1", "api5"):
            own = "|".join(str(i) for (a, user), i in self.ids.items() if a == api and user in TEST)
            out.append(rf"/vapi/{api}/user/(?!(?:{own})(?:\D|$))\d+(\D.*)?")
        return out

    def _tok(self, user, password):
        return {"Authorization-Token": basic(user, password)}

    def play(self, rec: Recorder) -> None:
        """Users of each vAPI part doing what it is for."""
        people = {**REAL, **TEST}
        # api1: sign up, read and edit one's own profile
        for user, pw in people.items():
            a = rec.call("POST", "/vapi/api1/user", json_body={"username": user, "name": user.title(), "course":
                                                                 "Intro to paper sales", "password": pw})
            assert a.status in (200, 201), a.text
            self.ids[("api1", user)] = a.json()["id"]
        for user, pw in people.items():
            i = self.ids[("api1", user)]
            rec.call("GET", f"/vapi/api1/user/{i}", headers=self._tok(user, pw))
            if user in ("dwight_s", "qa_alice"):
                rec.call("PUT", f"/vapi/api1/user/{i}", headers=self._tok(user, pw),
                         json_body={"course": "Beet farming 101"})
        rec.call("GET", "/vapi/api1/user/1", headers=self._tok("michaels", "60!eH>Rt=d'-"))
        # api2: log in with email and password, read the details page with the token
        for email, pw in (("savanna48@ortiz.com", "zTyBwV/9"), ("qa.alice@example.org", "QaAlice-pw-7"),
                          ("qa.bob@example.org", "QaBob-pw-8"), ("hauck.aletha@yahoo.com", "wrong-guess")):
            a = rec.call("POST", "/vapi/api2/user/login", json_body={"email": email, "password": pw})
            if a.status == 200:
                rec.call("GET", "/vapi/api2/user/details", headers={"Authorization-Token": a.json()["token"]})
        # api3: sign up, log in, comment on posts, read the comments
        for user, pw in people.items():
            rec.call("POST", "/vapi/api3/user", json_body={"username": user, "name": user.title(), "password": pw})
            rec.call("POST", "/vapi/api3/user/login", json_body={"username": user, "password": pw})
            rec.call("POST", "/vapi/api3/comment", json_body={
                "postid": 1, "deviceid": f"android-{user}-7731", "latitude": "40.4406", "longitude": "-79.9959",
                "commenttext": f"{user} enjoyed this post", "username": user})
            rec.call("GET", "/vapi/api3/comment")
        # api4: log in by phone, verify the OTP, read with the API key it gives
        for mobile in ("9876543210", "9123456780"):
            rec.call("POST", "/vapi/api4/login", json_body={"mobileno": mobile})
            a = rec.call("POST", "/vapi/api4/otp/verify", json_body={"otp": API4_KEY_OTP})
            self.api4_key = a.json()["key"]
            rec.call("GET", "/vapi/api4/user", headers={"Authorization-Token": self.api4_key})
        rec.call("POST", "/vapi/api4/otp/verify", json_body={"otp": "1873"})
        # api5: sign up, read one's own profile; the administrator lists every user
        for user, pw in {**people, "api5_admin_check": None}.items():
            if pw is None:
                break
            a = rec.call("POST", "/vapi/api5/user", json_body={"username": user, "name": user.title(), "address":
                                                                 "1725 Slough Ave", "mobileno": "5705550100",
                                                                 "password": pw})
            self.ids[("api5", user)] = a.json()["id"]
            rec.call("GET", f"/vapi/api5/user/{self.ids[('api5', user)]}", headers=self._tok(user, pw))
        rec.call("GET", "/vapi/api5/user/1", headers=self._tok("admin", "admin!@#$"))
        rec.call("GET", "/vapi/api5/users", headers=self._tok("admin", "admin!@#$"))
        # api6: sign up, read one's own account (credit shows there)
        for user, pw in people.items():
            rec.call("POST", "/vapi/api6/user", json_body={"name": user.title(), "username": user, "password": pw})
            rec.call("GET", "/vapi/api6/user/me", headers=self._tok(user, pw))
        # api8: log in, read one's secret with the key the login gives
        rec.call("POST", "/vapi/api8/user/login", json_body={"username": "admin", "password": "guess"})
        for user, pw in (("admin", "z2Eav@j6A:^}fSMe"), ("qa_alice", TEST["qa_alice"])):
            a = rec.call("POST", "/vapi/api8/user/login", json_body={"username": user, "password": pw})
            rec.call("GET", "/vapi/api8/user/secret", headers={"Authorization-Token": a.json()["authkey"]})
        # api9: the current (v2) PIN login
        rec.call("POST", "/vapi/api9/v2/user/login", json_body={"username": "richardbranson", "pin": "1655"})
        # jwt: sign up for a token, read with it
        for user, pw in people.items():
            a = rec.call("POST", "/vapi/jwt/user", json_body={"username": user, "password": pw})
            self.jwt[user] = a.json()["token"]
            rec.call("GET", "/vapi/jwt/user", headers={"Authorization-Token": self.jwt[user]})
        # sticky notes: leave notes, read them as JSON and as the HTML page
        for user in people:
            rec.call("POST", "/vapi/stickynotes", json_body={"note": f"{user}: buy more paper"})
        rec.call("GET", "/vapi/stickynotes", query={"format": "json"})
        rec.call("GET", "/vapi/stickynotes", query={"format": "html"})

    # --------------------------------------------------------------------------------------------
    def _env(self, base_url: str, part: str) -> dict:
        a, b = "qa_alice", "qa_bob"
        if part in ("api1", "api5"):
            return {"baseUrl": base_url, "authToken": basic(a, TEST[a]), "testUserId": str(self.ids[(part, a)]),
                    "objectIds": {"user": str(self.ids[(part, a)])},
                    "identities": [{"name": "bob", "authToken": basic(b, TEST[b]), "userId": str(self.ids[(part, b)]),
                                    "objectIds": {"user": str(self.ids[(part, b)])}}]}
        if part == "api6":
            return {"baseUrl": base_url, "authToken": basic(a, TEST[a]), "testUserId": a,
                    "identities": [{"name": "bob", "authToken": basic(b, TEST[b]), "userId": b}]}
        if part == "api2":
            def login(user):
                return {"method": "POST", "url": "/vapi/api2/user/login", "body": {
                    "email": f"{user.replace('_', '.')}@example.org", "password": TEST[user]},
                    "tokenPath": "token", "header": "Authorization-Token", "scheme": ""}
            return {"baseUrl": base_url, "testUserId": "qa.alice@example.org", "login": login(a),
                    "identities": [{"name": "bob", "userId": "qa.bob@example.org", "login": login(b)}]}
        if part == "api4":
            return {"baseUrl": base_url, "authToken": self.api4_key, "testUserId": "9876543210"}
        if part == "api8":
            return {"baseUrl": base_url, "testUserId": a, "login": {
                "method": "POST", "url": "/vapi/api8/user/login", "body": {"username": a, "password": TEST[a]},
                "tokenPath": "authkey", "header": "Authorization-Token", "scheme": ""}}
        if part == "jwt":  # its only "login" is the sign-up (a second one fails): the tokens it gave, 30 min valid
            return {"baseUrl": base_url, "testUserId": a, "authToken": self.jwt[a],
                    "identities": [{"name": "bob", "userId": b, "authToken": self.jwt[b]}]}
        return {"baseUrl": base_url, "testUserId": a}  # api3, api9, sticky notes: no credential

    def plan(self, base_url: str, inventory: list[dict]):
        """One run per endpoint, each with the environment of its part of vAPI."""
        for e in sorted(inventory, key=lambda e: (e["path"], e["method"])):
            part = e["path"].split("/")[2] if e["path"].count("/") >= 2 else ""
            yield self._env(base_url, part), e["path"], e["method"]

    def object_ids(self, resource: str, identity: str) -> str | None:
        return None

    def owner_of(self, table: str, row: dict, snapshot: dict) -> str | None:
        for key in ("username", "email"):
            if row.get(key):
                return row[key]
        if table == "stickynotes":
            return (row.get("note") or "").split(":")[0] or None
        return None
