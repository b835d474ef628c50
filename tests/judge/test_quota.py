"""What a kernel adds to the submission's folder is counted by what it really costs, and removed."""
import os

from grader.judge import quota


def test_new_files_count_by_their_blocks_and_entries(tmp_path):
    (tmp_path / "answer.ipynb").write_text("{}")
    before = quota.snapshot(str(tmp_path))
    assert quota.added(str(tmp_path), before, 1 << 30) == 0
    (tmp_path / "big").write_bytes(b"x" * (1 << 20))
    with open(tmp_path / "sparse", "wb") as fh:      # 1 GiB long, nothing written
        fh.truncate(1 << 30)
    got = quota.added(str(tmp_path), before, 1 << 30)
    assert (1 << 20) <= got < (1 << 20) + 64 * quota.ENTRY


def test_many_empty_files_are_not_free(tmp_path):
    before = quota.snapshot(str(tmp_path))
    for i in range(300):
        (tmp_path / f"f{i}").touch()
    assert quota.added(str(tmp_path), before, 1 << 30) == 300 * quota.ENTRY
    assert quota.added(str(tmp_path), before, 10 * quota.ENTRY) == 11 * quota.ENTRY  # stops early


def test_what_was_added_is_removed_and_what_grew_is_cut_back(tmp_path):
    (tmp_path / "answer.ipynb").write_text("{}")
    before = quota.snapshot(str(tmp_path))
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "f").write_bytes(b"x" * 100_000)
    with open(tmp_path / "answer.ipynb", "a") as fh:
        fh.write("y" * 100_000)
    quota.remove_added(str(tmp_path), before)
    assert sorted(os.listdir(tmp_path)) == ["answer.ipynb"]
    assert (tmp_path / "answer.ipynb").read_text() == "{}"
