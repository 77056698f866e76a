"""`convoscope gibberish --lang auto` (issue 39, observation 8): py3langid's packed model is
unpacked once per machine and kept, not on every start (about 0.4 s CPU each time), and the kept
model identifies exactly as py3langid's own loader does."""

import lzma

import pytest

from convoscope.filters import _langid_model

pytest.importorskip("py3langid")

TEXTS = ["The fries were great", "adorei", "Das Essen war lecker", "asdfghjkl", "草", "muy bueno",
         "C'est très bon", "감자튀김이 맛있어요", ""]


def _reference():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def _unpacks(monkeypatch):
    calls = []
    original = lzma.open
    monkeypatch.setattr(lzma, "open", lambda *a, **k: calls.append(a) or original(*a, **k))
    return calls


def test_the_model_is_unpacked_once_and_identifies_as_py3langid_does(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    calls = _unpacks(monkeypatch)
    first = _langid_model.load_identifier()
    second = _langid_model.load_identifier()
    assert len(calls) == 1
    assert [path.name for path in (tmp_path / "convoscope").iterdir()] == [
        _langid_model.unpacked_path(_langid_model.packed_path()).name]
    reference = _reference()
    for text in TEXTS:
        assert first.rank(text) == second.rank(text) == reference.rank(text)
        assert second.classify(text) == reference.classify(text)


def test_a_damaged_kept_model_is_replaced_and_changes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    kept = _langid_model.unpacked_path(_langid_model.packed_path())
    kept.parent.mkdir(parents=True)
    kept.write_bytes(b"PK\x03\x04 not an archive")
    identifier = _langid_model.load_identifier()
    assert [identifier.classify(text) for text in TEXTS] == [_reference().classify(text) for text in TEXTS]
    assert not kept.exists() or kept.stat().st_size > 1_000_000


def test_a_cache_folder_that_cannot_be_written_leaves_py3langid_to_unpack(tmp_path, monkeypatch):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    identifier = _langid_model.load_identifier()
    assert identifier.classify("Das Essen war lecker") == _reference().classify("Das Essen war lecker")
    assert blocked.read_text() == "not a folder"


def test_the_kept_models_large_tables_are_mapped_not_copied(tmp_path, monkeypatch):
    """The class-feature table and the tokeniser's transitions are mapped from the kept file (an
    answer reads a few rows of the one and walks a few hundred states of the other), not read:
    the same values and item types as py3langid's own loader gives, 0.06 s and about 70 MB
    resident less (issue 39)."""
    import mmap

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    _langid_model.load_identifier()  # unpacks
    kept = _langid_model.load_identifier()
    reference = _reference()
    assert not kept.nb_ptc.flags.owndata and not kept.nb_ptc.flags.writeable
    assert kept.nb_ptc.dtype == reference.nb_ptc.dtype and (kept.nb_ptc == reference.nb_ptc).all()
    assert isinstance(kept.tk_nextmove, memoryview) and isinstance(kept.tk_nextmove.obj, mmap.mmap)
    assert kept.tk_nextmove.readonly and kept.tk_nextmove.format == reference.tk_nextmove.typecode
    assert kept.tk_nextmove == reference.tk_nextmove and kept.tk_row == reference.tk_row
    assert kept.tk_output == reference.tk_output and kept.nb_classes == reference.nb_classes
    assert [kept.classify(text) for text in TEXTS] == [reference.classify(text) for text in TEXTS]


def test_a_kept_model_cut_short_is_replaced(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    _langid_model.load_identifier()
    kept = _langid_model.unpacked_path(_langid_model.packed_path())
    kept.write_bytes(kept.read_bytes()[:50_000_000])  # inside the transitions
    identifier = _langid_model.load_identifier()
    assert [identifier.classify(text) for text in TEXTS] == [_reference().classify(text) for text in TEXTS]


def test_a_damaged_archive_leaves_no_model_and_no_part_file_behind(tmp_path):
    # _unpack writes through convoscope._folders.keep_file, streamed: a source that fails midway
    # (here, an xz stream cut short) keeps nothing, neither the model nor its ".part" file.
    import lzma

    from convoscope.filters._langid_model import _unpack

    packed = tmp_path / "model.xz"
    packed.write_bytes(lzma.compress(b"x" * 200_000)[:-200])
    unpacked = tmp_path / "kept" / "model.npz"
    _unpack(packed, unpacked)
    assert not unpacked.exists() and list(unpacked.parent.iterdir()) == []
    packed.write_bytes(lzma.compress(b"y" * 200_000))
    _unpack(packed, unpacked)
    assert unpacked.read_bytes() == b"y" * 200_000
    assert [kept.name for kept in unpacked.parent.iterdir()] == ["model.npz"]
