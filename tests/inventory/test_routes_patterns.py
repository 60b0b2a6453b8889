"""Path patterns: normalising, regexes, update-paths rules and suggested paths (pure functions)."""
import re

import pytest

from inventory.patterns import (
    path_problem,
    path_segments,
    pattern_best_match,
    pattern_compile,
    pattern_normalise,
    pattern_regex,
    paths_suggest,
)


class TestPatternCompile:
    def test_parameters_are_renumbered_left_to_right(self):
        assert pattern_normalise("/users/{id}/orders/{orderId}") == "/users/{param1}/orders/{param2}"
        assert pattern_normalise("/a/{param2}/{}") == "/a/{param1}/{param2}"

    def test_root_has_no_segments(self):
        assert path_segments("/") == []
        assert pattern_compile("/").regex == "^\\/$"
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
