"""DVGA, Damn Vulnerable GraphQL Application (Python, Flask + Graphene 2, SQLite): one `POST /graphql`
endpoint for every operation, no credential header (its `me` query takes the token as an argument).
The traffic is what its web pages send: browse public pastes, sign up, log in, create, read, edit,
search and delete one's own pastes.

Left out of the traffic on purpose: `importPaste` (it runs curl against any host it is given: replaying
it would make this machine fetch outside addresses), `systemDiagnostics`, `systemDebug` and
`systemHealth` (they run shell commands), `uploadPaste` (writes files) and `deleteAllPastes`."""
from __future__ import annotations

from common import Recorder

TEST = {"qa_alice": "QaAlice-pw-7", "qa_bob": "QaBob-pw-8"}
REAL = {"nina_p": "Nina-pw-1", "theo_m": "Theo-pw-2"}

BROWSE = "query Browse($public: Boolean) { pastes(public: $public) { id title content public owner { name } } }"
SIGN_UP = ("mutation SignUp($u: UserInput!) { createUser(userData: $u) { user { id username } } }")
LOG_IN = "mutation LogIn($username: String, $password: String) { login(username: $username, password: $password) { accessToken refreshToken } }"
ME = "query Me($token: String) { me(token: $token) { id username } }"
CREATE = ("mutation Create($title: String, $content: String, $public: Boolean) { createPaste(title: $title, "
          "content: $content, public: $public) { paste { id title content public } } }")
READ = "query Read($id: Int) { paste(id: $id) { id title content public } }"
EDIT = ("mutation Edit($id: Int, $title: String, $content: String) { editPaste(id: $id, title: $title, "
        "content: $content) { paste { id title content } } }")
SEARCH = "query Find($filter: String) { pastes(filter: $filter) { id title content } }"
DELETE = "mutation Delete($id: Int) { deletePaste(id: $id) { result } }"


class Target:
    name = "dvga"
    tables = {"users": "username", "pastes": "id"}
    destructive = None

    def __init__(self):
        self.pastes: dict[int, str] = {}  # paste id -> the user who created it in traffic
        self.seeded: set[int] = set()

    @property
    def test_users(self) -> set[str]:
        return set(TEST)

    @property
    def traffic_users(self) -> set[str]:
        return set(REAL) | {"admin", "operator", "seeded paste"}

    def traffic_names(self) -> set[str]:
        """Users of traffic and the ids of pastes that are not the test identities' (GraphQL variables)."""
        others = {str(i) for i, u in self.pastes.items() if u not in TEST} | {str(i) for i in self.seeded}
        return set(REAL) | {"admin", "operator"} | others

    def traffic_paths(self) -> list[str]:
        return []

    def _gql(self, rec: Recorder, name: str, query: str, variables: dict):
        answer = rec.call("POST", "/graphql", json_body={"operationName": name, "query": query, "variables": variables})
        assert answer.status == 200, answer.text
        return answer.json()

    def play(self, rec: Recorder) -> None:
        for item in self._gql(rec, "Browse", BROWSE, {"public": True})["data"]["pastes"]:
            self.seeded.add(int(item["id"]))
        tokens = {}
        for user, pw in {**REAL, **TEST}.items():
            self._gql(rec, "SignUp", SIGN_UP, {"u": {"username": user, "email": f"{user}@example.org", "password": pw}})
        rec.call("POST", "/graphql", json_body={"operationName": "LogIn", "query": LOG_IN,
                                                "variables": {"username": "theo_m", "password": "theo-typo"}})
        for user, pw in {**REAL, **TEST}.items():
            tokens[user] = self._gql(rec, "LogIn", LOG_IN, {"username": user, "password": pw})["data"]["login"]["accessToken"]
            self._gql(rec, "Me", ME, {"token": tokens[user]})
        for n, user in enumerate([*REAL, *TEST, "nina_p"]):
            paste = self._gql(rec, "Create", CREATE, {"title": f"{user} shopping list {n}", "content": f"eggs, milk ({user})",
                                                      "public": n % 2 == 0})["data"]["createPaste"]["paste"]
            self.pastes[int(paste["id"])] = user
            self._gql(rec, "Read", READ, {"id": int(paste["id"])})
        nina = [i for i, u in self.pastes.items() if u == "nina_p"]
        self._gql(rec, "Edit", EDIT, {"id": nina[0], "title": "nina_p shopping list (done)", "content": "eggs, milk, tea"})
        self._gql(rec, "Find", SEARCH, {"filter": "nina_p shopping list (done)"})
        self._gql(rec, "Delete", DELETE, {"id": nina[1]})
        del self.pastes[nina[1]]
        self._gql(rec, "Browse", BROWSE, {"public": True})

    def environment(self, base_url: str) -> dict:
        """DVGA has no credential header: the environment names the test user and its own paste."""
        own = {u: [i for i, o in self.pastes.items() if o == u][0] for u in TEST}
        return {"baseUrl": base_url, "testUserId": "qa_alice", "objectIds": {"paste": str(own["qa_alice"])},
                "identities": [{"name": "bob", "userId": "qa_bob", "objectIds": {"paste": str(own["qa_bob"])}}]}

    def object_ids(self, resource: str, identity: str) -> str | None:
        user = "qa_alice" if identity == "primary" else "qa_bob"
        if resource in ("paste", "pastes", "id"):
            return str([i for i, o in self.pastes.items() if o == user][0])
        return None

    def owner_of(self, table: str, row: dict, snapshot: dict) -> str | None:
        if table == "users":
            return row["username"]
        pid = int(row["id"])
        if pid in self.pastes:
            return self.pastes[pid]
        return "seeded paste"
