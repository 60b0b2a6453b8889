"""VAmPI (Flask + SQLite, HS256 bearer JWTs): the traffic of its ordinary users, the testing
environment a user of apiscope would configure for it, and how its data is read."""
from __future__ import annotations

from common import Recorder

PASSWORDS = {"name1": "pass1", "name2": "pass2", "admin": "pass1"}  # VAmPI's seeded users (its README)
TEST_IDENTITIES = {"qa_alice": "QaAlice-pw-7", "qa_bob": "QaBob-pw-8"}
NEW_USERS = {"maria": "Maria-pw-1", "tomas": "Tomas-pw-2", "spammer9": "Spam-pw-9"}


class Target:
    name = "vampi"
    tables = {"users": "username", "books": "book_title"}
    destructive = r"^/createdb$"

    def __init__(self, mode: str = "vulnerable"):
        # "<mode>-noreset": the database is populated before the agent sees traffic, so /createdb is not
        # in the traffic (what the rest of a run does when no reset hides it)
        self.record_createdb = not mode.endswith("-noreset")
        self.tokens: dict[str, str] = {}
        self.books: dict[str, str] = {}  # user -> the title of the book they added

    @property
    def test_users(self) -> set[str]:
        return set(TEST_IDENTITIES)

    @property
    def traffic_users(self) -> set[str]:
        return {"name1", "name2", "admin", "maria", "tomas", "spammer9"}

    def traffic_names(self) -> set[str]:
        """Users of traffic who are no test identity, their emails and their books' titles."""
        names = set(self.traffic_users)
        names |= {f"{u}@mail.com" for u in ("mail1", "mail2", "admin")} | {"maria.k@mail.com", "tomas.r@mail.com"}
        names |= {title for user, title in self.books.items() if user in self.traffic_users}
        return names

    def play(self, rec: Recorder) -> None:
        """What VAmPI's users do: the operator populates the database once (VAmPI's README asks for it),
        visitors browse, people register and log in, add books and read them, change their email and
        password; the administrator reads the debug listing and deletes a spam account."""
        rec.call("GET", "/createdb", record=self.record_createdb)
        rec.call("GET", "/")
        rec.call("GET", "/users/v1")
        rec.call("GET", "/books/v1")
        rec.call("GET", "/users/v1/name1")
        emails = {"maria": "maria.k@mail.com", "tomas": "tomas.r@mail.com", "spammer9": "spam9@mail.com",
                  "qa_alice": "qa.alice@mail.com", "qa_bob": "qa.bob@mail.com"}
        for user, password in {**NEW_USERS, **TEST_IDENTITIES}.items():
            answer = rec.call("POST", "/users/v1/register",
                              json_body={"username": user, "password": password, "email": emails[user]})
            assert answer.status == 200, answer.text
        rec.call("POST", "/users/v1/login", json_body={"username": "tomas", "password": "tomas-typo"})
        for user, password in {**PASSWORDS, **NEW_USERS, **TEST_IDENTITIES}.items():
            answer = rec.call("POST", "/users/v1/login", json_body={"username": user, "password": password})
            self.tokens[user] = answer.json()["auth_token"]
        for user in ("name1", "name2", "maria", "tomas", "qa_alice", "qa_bob"):
            token = self.tokens[user]
            rec.call("GET", "/me", token=token)
            title = f"{user}-notes-{len(self.books) + 11}"
            answer = rec.call("POST", "/books/v1", token=token, json_body={"book_title": title,
                                                                             "secret": f"{user}'s secret remark"})
            assert answer.status == 200, answer.text
            self.books[user] = title
            rec.call("GET", f"/books/v1/{title}", token=token)
            rec.call("GET", f"/users/v1/{user}", token=token)
            rec.call("GET", "/books/v1", token=token)
        for user in ("maria", "tomas", "qa_alice"):
            answer = rec.call("PUT", f"/users/v1/{user}/email", token=self.tokens[user],
                              json_body={"email": emails[user].replace("@mail.com", "@post.com")})
            assert answer.status == 204, answer.text
        answer = rec.call("PUT", "/users/v1/maria/password", token=self.tokens["maria"],
                          json_body={"password": "Maria-pw-1b"})
        assert answer.status == 204, answer.text
        NEW_USERS["maria"] = "Maria-pw-1b"
        rec.call("GET", "/users/v1/_debug", token=self.tokens["admin"])
        answer = rec.call("DELETE", "/users/v1/spammer9", token=self.tokens["admin"])
        assert answer.status == 200, answer.text
        rec.call("GET", "/users/v1", token=self.tokens["name2"])

    def environment(self, base_url: str) -> dict:
        """docs/testgen.md: the primary identity with a login recipe, a second identity with its own
        login and objects, the primary's own objects."""
        def login(user):
            return {"method": "POST", "url": "/users/v1/login",
                    "body": {"username": user, "password": TEST_IDENTITIES[user]}, "tokenPath": "auth_token"}
        return {
            "baseUrl": base_url,
            "testUserId": "qa_alice",
            "login": login("qa_alice"),
            "objectIds": {"book": self.books["qa_alice"]},
            "identities": [{"name": "bob", "userId": "qa_bob", "objectIds": {"book": self.books["qa_bob"]},
                            "login": login("qa_bob")}],
        }

    def object_ids(self, resource: str, identity: str) -> str | None:
        """An own object of that type for a test identity, for entries the results ask for."""
        user = "qa_alice" if identity == "primary" else "qa_bob"
        if resource in ("book", "books"):
            return self.books[user]
        if resource in ("user", "users", "username"):
            return user
        return None

    def owner_of(self, table: str, row: dict, snapshot: dict) -> str | None:
        if table == "users":
            return row["username"]
        user = next((u for u in snapshot["users"].values() if u["id"] == row.get("user_id")), None)
        return user["username"] if user else None
