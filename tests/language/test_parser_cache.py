"""The parser cache (:mod:`agentguard.language.parser_cache`): a saved parser is read only
when it is this grammar's, private and whole; anything else builds, silently."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from lark import Lark

from agentguard.errors import SpecSyntaxError
from agentguard.language import grammar, parse_spec
from agentguard.language.parser_cache import OFF, cache_dir, cache_key, cached_parser

GRAMMAR = 'start: "a" NAME\n%import common.CNAME -> NAME\n%ignore " "\n'
OPTIONS = {"parser": "lalr", "propagate_positions": True}
SPEC = "spec s\nconstraint c\n  := G !wipe\n"


class Counter:
    """A build function that counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> Lark:
        self.calls += 1
        return Lark(GRAMMAR, **OPTIONS)  # type: ignore[arg-type]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv(OFF, raising=False)
    return tmp_path / "agentguard"


def _entry(folder: Path) -> Path:
    (found,) = folder.glob("agentltl-*.parser")
    return found


def test_second_process_loads_what_the_first_saved(cache: Path) -> None:
    """Built once, then loaded: the loaded parser parses as the built one."""
    build = Counter()
    first = cached_parser(GRAMMAR, OPTIONS, build)
    second = cached_parser(GRAMMAR, OPTIONS, build)
    assert build.calls == 1
    assert second.parse("a x") == first.parse("a x")
    assert stat.S_IMODE(_entry(cache).stat().st_mode) == 0o600
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700


def test_key_names_grammar_and_options() -> None:
    """Another grammar, or other options, is another entry."""
    key = cache_key(GRAMMAR, OPTIONS)
    assert cache_key(GRAMMAR + "\n", OPTIONS) != key
    assert cache_key(GRAMMAR, {**OPTIONS, "propagate_positions": False}) != key


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # torn write
        lambda data: data[:-10] + b"0123456789",  # flipped bytes in the pickle
        lambda data: b"garbage",
        lambda data: b"",
    ],
)
def test_corrupt_entry_is_rebuilt_never_loaded(cache: Path, damage: object) -> None:
    """A damaged file fails its checks: the parser is built again and the entry rewritten."""
    cached_parser(GRAMMAR, OPTIONS, Counter())
    entry = _entry(cache)
    entry.write_bytes(damage(entry.read_bytes()))  # type: ignore[operator]
    build = Counter()
    parser = cached_parser(GRAMMAR, OPTIONS, build)
    assert build.calls == 1
    assert parser.parse("a y").children[0] == "y"
    build_again = Counter()
    cached_parser(GRAMMAR, OPTIONS, build_again)
    assert build_again.calls == 0  # rewritten whole


def test_entry_writable_by_others_is_not_read(cache: Path) -> None:
    """A file someone else could have written is never unpickled."""
    cached_parser(GRAMMAR, OPTIONS, Counter())
    entry = _entry(cache)
    entry.chmod(0o666)
    build = Counter()
    cached_parser(GRAMMAR, OPTIONS, build)
    assert build.calls == 1


def test_shared_directory_is_not_used(cache: Path) -> None:
    """A cache directory others can write is no cache: nothing is read or written."""
    cache.mkdir(mode=0o700)
    cache.chmod(0o777)
    assert cache_dir() is None
    build = Counter()
    cached_parser(GRAMMAR, OPTIONS, build)
    cached_parser(GRAMMAR, OPTIONS, build)
    assert build.calls == 2
    assert not list(cache.iterdir())


def test_unwritable_entry_builds_silently(cache: Path) -> None:
    """An entry that can be neither read nor replaced (a directory in its place): the
    parser is built each time, nothing raised, no temporary file left behind."""
    cache.mkdir(mode=0o700)
    (cache / f"agentltl-{cache_key(GRAMMAR, OPTIONS)[:32]}.parser").mkdir()
    build = Counter()
    assert cached_parser(GRAMMAR, OPTIONS, build).parse("a z")
    assert cached_parser(GRAMMAR, OPTIONS, build).parse("a z")
    assert build.calls == 2
    assert [p.suffix for p in cache.iterdir()] == [".parser"]


def test_no_home_builds_silently(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache root that is a file (so no directory can be made there) is no cache."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert cache_dir() is None
    build = Counter()
    cached_parser(GRAMMAR, OPTIONS, build)
    assert build.calls == 1


def test_turned_off(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``AGENTGUARD_PARSER_CACHE=0``: built every time, nothing written."""
    monkeypatch.setenv(OFF, "0")
    build = Counter()
    cached_parser(GRAMMAR, OPTIONS, build)
    cached_parser(GRAMMAR, OPTIONS, build)
    assert build.calls == 2
    assert not cache.exists()


def _syntax_error(text: str) -> SpecSyntaxError:
    with pytest.raises(SpecSyntaxError) as caught:
        parse_spec(text)
    return caught.value


def test_spec_parser_from_cache_reports_the_same(cache: Path) -> None:
    """AgentLTL's parser loaded from the cache parses specs and locates errors as built."""
    bad = "spec s\nconstraint c\n  := G (wipe\n  x\n"
    grammar.parser.cache_clear()
    try:
        built, built_error = parse_spec(SPEC), _syntax_error(bad)
        assert _entry(cache).exists()
        grammar.parser.cache_clear()
        assert parse_spec(SPEC) == built
        loaded_error = _syntax_error(bad)
        assert (loaded_error.line, loaded_error.column) == (built_error.line, built_error.column)
        assert str(loaded_error) == str(built_error)
    finally:
        grammar.parser.cache_clear()
