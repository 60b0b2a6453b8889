"""c{api}tal (Checkmarx; FastAPI + asyncpg on PostgreSQL, a RealWorld-style blogging API, JWTs sent
as ``Authorization: Token <jwt>``): the traffic of its ordinary users, the testing environment a
user of apiscope would configure for it, and how its data is read."""
from __future__ import annotations

from common import Recorder

SEEDED = {"Pikachu": ("Pikachu@checkmarx.com", "snorlax"), "Bob_the_dev": ("bob_dev@checkmarx.com", "IamDev")}
NEW_USERS = {"lena_v": ("lena.v@example.org", "Lena-pw-31"), "omar_k": ("omar.k@example.org", "Omar-pw-32")}
TEST_IDENTITIES = {"qa_alice": ("qa.alice@example.org", "QaAlice-pw-7"), "qa_bob": ("qa.bob@example.org", "QaBob-pw-8")}


class Target:
    name = "capital"
    tables = {"users": "username", "articles": "slug", "commentaries": "id", "favorites": ("user_id", "article_id"),
              "followers_to_followings": ("follower_id", "following_id")}
    destructive = None  # c{api}tal has no reset route

    def __init__(self):
        self.tokens: dict[str, str] = {}
        self.articles: dict[str, list[str]] = {}
        self.comments: dict[str, list[int]] = {}

    @property
    def test_users(self) -> set[str]:
        return set(TEST_IDENTITIES)

    @property
    def traffic_users(self) -> set[str]:
        return set(SEEDED) | set(NEW_USERS) | {"TeamR$cket"}

    def traffic_names(self) -> set[str]:
        names = set(self.traffic_users) | {e for e, _ in SEEDED.values()} | {e for e, _ in NEW_USERS.values()}
        names |= {s for u, slugs in self.articles.items() if u not in TEST_IDENTITIES for s in slugs}
        names |= {"Dev_updates_1"}
        return names

    def _call(self, rec: Recorder, method: str, path: str, user: str | None = None, **kw):
        return rec.call(method, path, token=self.tokens.get(user) if user else None, scheme="Token", **kw)

    def play(self, rec: Recorder) -> None:
        """What c{api}tal's users do through its web front end: browse articles and tags, register,
        log in (the front end uses the v2 login), edit their profile, write, edit and delete articles,
        comment, delete their own comments, favourite and follow."""
        self._call(rec, "GET", "/api/tags")
        self._call(rec, "GET", "/api/articles", query={"limit": 10, "offset": 0})
        self._call(rec, "GET", "/api/articles/Dev_updates_1")
        self._call(rec, "GET", "/api/articles/Dev_updates_1/comments")
        for user, (email, password) in {**NEW_USERS, **TEST_IDENTITIES}.items():
            answer = self._call(rec, "POST", "/api/users",
                                json_body={"user": {"username": user, "email": email, "password": password}})
            assert answer.status == 201, answer.text
        self._call(rec, "POST", "/api/v2/users/login", json_body={"user": {"email": "lena.v@example.org",
                                                                            "password": "lena-typo"}})
        for user, (email, password) in {**SEEDED, **NEW_USERS, **TEST_IDENTITIES}.items():
            answer = self._call(rec, "POST", "/api/v2/users/login",
                                json_body={"user": {"email": email, "password": password}})
            assert answer.status == 200, answer.text
            self.tokens[user] = answer.json()["user"]["token"]
            self._call(rec, "GET", "/api/user", user)
        for user in ("lena_v", "qa_alice", "qa_bob"):
            answer = self._call(rec, "PUT", "/api/user", user, json_body={"user": {"bio": f"{user} writes about tea"}})
            assert answer.status == 200, answer.text
        for n, user in enumerate(("lena_v", "omar_k", "Bob_the_dev", "qa_alice", "qa_bob", "omar_k")):
            title = f"{user} field notes {n + 1}"
            answer = self._call(rec, "POST", "/api/articles", user, json_body={"article": {
                "title": title, "description": f"notes {n + 1}", "body": f"What {user} saw this week.",
                "tagList": ["notes"]}})
            assert answer.status in (200, 201), answer.text
            slug = answer.json()["article"]["slug"]
            self.articles.setdefault(user, []).append(slug)
            self._call(rec, "GET", f"/api/articles/{slug}", user)
        lena, omar = self.articles["lena_v"][0], self.articles["omar_k"][0]
        answer = self._call(rec, "PUT", f"/api/articles/{lena}", "lena_v",
                            json_body={"article": {"description": "notes, revised"}})
        assert answer.status == 200, answer.text
        for user, slug in (("omar_k", lena), ("lena_v", omar), ("qa_alice", self.articles["qa_alice"][0]),
                           ("qa_bob", self.articles["qa_bob"][0]), ("Pikachu", lena), ("omar_k", lena)):
            answer = self._call(rec, "POST", f"/api/articles/{slug}/comments", user,
                                json_body={"comment": {"body": f"{user} liked this"}})
            assert answer.status in (200, 201), answer.text
            self.comments.setdefault(user, []).append(answer.json()["comment"]["id"])
            self._call(rec, "GET", f"/api/articles/{slug}/comments", user)
        answer = self._call(rec, "DELETE", f"/api/articles/{lena}/comments/{self.comments['omar_k'][-1]}", "omar_k")
        assert answer.status in (200, 204), answer.text
        self.comments["omar_k"].pop()
        for user, slug in (("omar_k", lena), ("qa_bob", self.articles["qa_alice"][0]), ("Pikachu", omar)):
            self._call(rec, "POST", f"/api/articles/{slug}/favorite", user)
        self._call(rec, "DELETE", f"/api/articles/{omar}/favorite", "Pikachu")
        for user, other in (("lena_v", "omar_k"), ("qa_alice", "lena_v"), ("omar_k", "Pikachu")):
            self._call(rec, "GET", f"/api/profiles/{other}", user)
            self._call(rec, "POST", f"/api/profiles/{other}/follow", user)
        self._call(rec, "DELETE", "/api/profiles/Pikachu/follow", "omar_k")
        self._call(rec, "GET", "/api/profiles/TeamR$cket", "omar_k")
        for user in ("lena_v", "qa_alice"):
            self._call(rec, "GET", "/api/articles/feed", user, query={"limit": 10, "offset": 0})
            self._call(rec, "GET", "/api/articles", user, query={"limit": 10, "offset": 0, "tag": "notes"})
            self._call(rec, "GET", "/api/articles", user, query={"limit": 10, "offset": 0, "author": "lena_v"})
        draft = self.articles["omar_k"].pop()
        answer = self._call(rec, "DELETE", f"/api/articles/{draft}", "omar_k")
        assert answer.status in (200, 204), answer.text

    def environment(self, base_url: str) -> dict:
        def login(user):
            email, password = TEST_IDENTITIES[user]
            return {"method": "POST", "url": "/api/v2/users/login", "body": {"user": {"email": email, "password": password}},
                    "tokenPath": "user.token", "scheme": "Token"}
        return {
            "baseUrl": base_url,
            "testUserId": "qa_alice",
            "login": login("qa_alice"),
            "objectIds": {"article": self.articles["qa_alice"][0], "comment": str(self.comments["qa_alice"][0])},
            "identities": [{"name": "bob", "userId": "qa_bob", "login": login("qa_bob"),
                            "objectIds": {"article": self.articles["qa_bob"][0],
                                          "comment": str(self.comments["qa_bob"][0])}}],
        }

    def object_ids(self, resource: str, identity: str) -> str | None:
        user = "qa_alice" if identity == "primary" else "qa_bob"
        if resource in ("article", "articles", "slug"):
            return self.articles[user][0]
        if resource in ("comment", "comments"):
            return str(self.comments[user][0])
        if resource in ("profile", "profiles", "user", "users", "username"):
            return user
        return None

    def owner_of(self, table: str, row: dict, snapshot: dict) -> str | None:
        users = {u["id"]: u["username"] for u in snapshot["users"].values()}
        if table == "users":
            return row["username"]
        if table in ("articles", "commentaries"):
            return users.get(row.get("author_id"))
        if table == "favorites":
            return users.get(row["user_id"])
        if table == "followers_to_followings":
            return users.get(row["follower_id"])
        return None
