"""Path patterns (inventory.patterns, pure functions): normalising hosts and paths, segments and
parameterisation, regexes and matching, update-paths rules and suggested paths."""
from dataclasses import dataclass

import re

import pytest

from inventory.patterns.normalize import host_normalize, path_normalize, template_normalize
from inventory.patterns.operator_paths import path_problem, paths_suggest
from inventory.patterns.regex import PatternMatcher, pattern_best_match, pattern_compile, pattern_regex, pattern_shape
from inventory.patterns.segments import (
    path_parameterize,
    path_segments,
    pattern_normalise,
    pattern_renumber,
    segment_has_parameter,
    segment_is_parameter,
    segment_is_value,
)


class TestNormalize:
    @pytest.mark.parametrize("raw, name", [
        ("http://User@API.Example.com:8080/x", "api.example.com"),
        ("[::1]:8080", "::1"),
        ("fe80::1", "fe80::1"),
        ("example.com.", "example.com"),
    ])
    def test_host_names(self, raw, name):
        assert host_normalize(raw) == name
        assert host_normalize(name) == name

    def test_concrete_paths_drop_query_fragment_and_empty_segments(self):
        assert path_normalize(" /a//b/?x=1#f") == "/a/b"
        assert path_normalize("https://h.example/a/b") == "/a/b"
        assert path_normalize(None) == "/"

    def test_templates_keep_what_they_say(self):
        assert template_normalize("users/{id}/?x") == "/users/{id}"
        assert template_normalize("/a//b/") == "/a//b"
        assert template_normalize("") == "/"
        assert template_normalize("/users/42") == "/users/42"


class TestSegments:
    def test_splitting_ignores_empty_segments_and_the_query(self):
        assert path_segments("/a//b/?x=/y") == ["a", "b"]
        assert path_segments("a/b") == ["a", "b"]

    def test_holding_and_being_a_parameter(self):
        assert segment_has_parameter("{param1}.json") and not segment_is_parameter("{param1}.json")
        assert segment_is_parameter("{param1}") and segment_is_parameter("{}")
        assert not segment_has_parameter("users") and not segment_has_parameter("a{b")

    @pytest.mark.parametrize("segment", ["42", "-3", "1.5", "0b5e4c2a-8d3f-4e1a-9c7b-2f6d8e0a1b3c", "deadbeef42",
                                         "a1b2c3d4e5", "bob@example.com", "2024-01-31", "eyJhbGciOiJIUzI1NiJ9xYz"])
    def test_values(self, segment):
        assert segment_is_value(segment)

    @pytest.mark.parametrize("segment", ["v1", "api", "getUserProfile", "index.html", "oauth2callback", "user-settings"])
    def test_names(self, segment):
        assert not segment_is_value(segment)

    def test_parameterising_and_agent_spellings(self):
        assert path_parameterize("/orgs/17/repos/9f8e7d6c5b/issues/3") == "/orgs/{param1}/repos/{param2}/issues/{param3}"
        assert pattern_renumber("/u/:id/<x>/{y}/f-{z}.json?q") == "/u/{param1}/{param2}/{param3}/f-{param4}.json"


@dataclass
class Row:
    path: str
    user_set_path: bool = False

    def __post_init__(self):
        self.path_regex = pattern_regex(self.path)
        self.num_segments, self.num_literal_segments = pattern_shape(self.path)


class TestPatternMatcher:
    def test_exact_then_own_pattern_then_most_specific(self):
        me, users, anything = Row("/users/me"), Row("/users/{param1}"), Row("/{param1}/{param2}")
        matcher = PatternMatcher([anything, users, me])
        assert matcher.match("/users/me") is me
        assert matcher.match("/users/42") is users
        assert matcher.match("/shops/42", "/shops/{param1}") is None  # "shops" is no value for {param1}
        assert matcher.match("/7/42") is anything

    def test_only_operator_patterns_absorb_words(self):
        assert PatternMatcher([Row("/teams/{param1}")]).match("/teams/red") is None
        operator = Row("/teams/{param1}", user_set_path=True)
        assert PatternMatcher([operator]).match("/teams/red") is operator


class TestPatternCompile:
    def test_parameters_are_renumbered_left_to_right(self):
        assert pattern_normalise("/users/{id}/orders/{orderId}") == "/users/{param1}/orders/{param2}"
        assert pattern_normalise("/a/{param2}/{}") == "/a/{param1}/{param2}"

    def test_root_has_no_segments(self):
        assert path_segments("/") == []
        assert pattern_compile("/").regex == "^/$"
        assert pattern_compile("/").matches("/")
        assert not pattern_compile("/").matches("/x")

    def test_segment_counts(self):
        pattern = pattern_compile("/api/v1/users/{id}")
        assert (pattern.num_segments, pattern.num_literal_segments) == (4, 3)

    def test_parameter_matches_exactly_one_non_empty_segment(self):
        pattern = pattern_compile("/users/{param1}")
        assert pattern.matches("/users/42")
        assert pattern.matches("/users/{param1}")  # a pattern at least as specific
        assert not pattern.matches("/users/")
        assert not pattern.matches("/users/42/orders")
        assert not pattern.matches("/users")

    def test_literal_regex_characters_are_escaped(self):
        pattern = pattern_compile("/files/a.b+c(1)/x$y")
        assert pattern.matches("/files/a.b+c(1)/x$y")
        assert not pattern.matches("/files/aXb+c(1)/x$y")
        assert not pattern.matches("/files/a.bbc(1)/x$y")

    def test_a_parameter_may_sit_inside_a_segment(self):
        pattern = pattern_compile("/files/{name}.json/{id}")
        assert pattern.path == "/files/{param1}.json/{param2}"
        assert (pattern.num_segments, pattern.num_literal_segments) == (3, 1)
        assert pattern.matches("/files/report.json/7")
        assert not pattern.matches("/files/report.txt/7")
        assert not pattern.matches("/files/.json/7")

    def test_regex_is_anchored(self):
        regex = pattern_regex("/users/{param1}")
        assert re.fullmatch(regex, "/users/1")
        assert not re.search(regex, "/api/users/1")


class TestPathProblem:
    @pytest.mark.parametrize("path, reason", [
        ("users/1", "must start with /"),
        ("/users?id=1", "must not contain ?"),
        ("/users#x", "must not contain #"),
        ("/users\\1", "must not contain \\"),
        ("/a<b", "must not contain <"),
        ("/a>b", "must not contain >"),
        ("/a&b", "must not contain &"),
        ("/a=b", "must not contain ="),
        ("/users//1", "must not contain empty segments"),
        ("/users/", "must not contain empty segments"),
        ("/us ers", "must not contain whitespace or control characters"),
        ("/users/{param1", "braces must enclose a parameter name, e.g. /users/{param1}"),
        ("/users/{a}}", "braces must enclose a parameter name, e.g. /users/{param1}"),
        ("/users/{a b}", "must not contain whitespace or control characters"),
    ])
    def test_refused_paths_name_their_reason(self, path, reason):
        assert path_problem(path) == reason

    def test_segment_count_must_match_the_current_pattern(self):
        assert path_problem("/users/{param1}", num_segments=2) is None
        assert path_problem("/users", num_segments=2) == "must have 2 segment(s) like the current path, not 1"

    def test_acceptable_paths(self):
        for path in ("/", "/users/{param1}", "/v1/a-b_c.d~e/{id}", "/x/%20", "/files/{param1}.json"):
            assert path_problem(path) is None, path


class TestBestMatch:
    def test_more_literal_segments_win_and_ties_go_to_the_earlier(self):
        general = pattern_compile("/{param1}/{param2}")
        users = pattern_compile("/users/{param1}")
        me = pattern_compile("/users/me")
        assert pattern_best_match("/users/me", [general, users, me]) == me
        assert pattern_best_match("/users/7", [general, users, me]) == users
        assert pattern_best_match("/shops/7", [general, users, me]) == general
        left, right = pattern_compile("/a/{param1}"), pattern_compile("/{param1}/b")
        assert pattern_best_match("/a/b", [left, right]) == left
        assert pattern_best_match("/a/b", [right, left]) == right
        assert pattern_best_match("/c/d", [left, right]) is None


class TestSuggest:
    def test_rare_values_become_parameters(self):
        paths = [f"/users/{n}/orders" for n in range(20)]
        assert paths_suggest(paths) == ["/users/{param1}/orders"]

    def test_values_seen_in_ten_percent_or_more_stay_literal(self):
        # 10 distinct ids: each at exactly 10% -> literal (the rule is "under 10%").
        paths = [f"/users/{n}" for n in range(10)]
        assert sorted(paths_suggest(paths)) == sorted(paths)

    def test_candidates_are_ranked_by_mean_literal_frequency(self):
        paths = [f"/api/users/{n}" for n in range(12)] + [f"/api/shops/{n}" for n in range(100, 108)]
        # api: 100%; users 60%, shops 40%; every id 5% -> parameter.
        assert paths_suggest(paths) == ["/api/users/{param1}", "/api/shops/{param1}"]

    def test_duplicates_count_once_and_all_rare_is_all_parameters(self):
        paths = [f"/users/{n}" for n in range(18)] + ["/users/me", "/users/me", "/health/live"]
        assert paths_suggest(paths) == ["/users/{param1}", "/{param1}/{param2}"]

    def test_groups_by_segment_count_and_caps_the_number(self):
        paths = [f"/a{n}" for n in range(300)] + [f"/b/{n}" for n in range(5)]
        suggestions = paths_suggest(paths, limit=100)
        assert len(suggestions) <= 100
        assert "/{param1}" in suggestions
        assert all(s.count("/") in (1, 2) for s in suggestions)

    def test_no_paths_no_suggestions(self):
        assert paths_suggest([]) == []


class TestDictionaryWords:
    """The word list learning never merges (DECISIONS §9 amended): Hunspell's en_US (chunspell)."""

    def test_plurals_and_inflections_are_words_and_lowercase_given_names_are_not(self):
        from inventory.patterns.words import is_dictionary_word

        for word in ("details", "history", "settings", "notes", "comments", "tags", "events", "files", "messages",
                     "shipments", "cat", "demo", "tree", "is", "a", "quickly", "running", "Demo", "USERS", "close.json"):
            assert is_dictionary_word(word), word
        for value in ("dmitri", "alice", "walter", "yolanda", "name1", "spring-launch", "hello_world", "octocat",
                      "main.css", "configmaps", ""):
            assert not is_dictionary_word(value), value

    def test_compounds_of_words_written_together(self):
        from inventory.patterns.words import is_compound_word

        for word in ("configmaps", "serviceaccounts", "persistentvolumeclaims", "virtualMachines", "resourceGroups"):
            assert is_compound_word(word), word
        for value in ("dmitri", "octocat", "details", "spring-launch", "name1", "abc", "torvalds"):
            assert not is_compound_word(value), value
