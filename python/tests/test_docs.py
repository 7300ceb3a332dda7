"""The Python code blocks of docs/python.md and docs/getting-started.md run unchanged."""

import os
import re

import pytest

from conftest import ROOT

DOCS = ["python.md", "getting-started.md", "impact.md", "inverse-dynamics.md"]


def code_blocks(name):
    text = (ROOT / "docs" / name).read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


@pytest.mark.parametrize("name", DOCS)
def test_doc_code_blocks_run_unchanged(name, tmp_path, capsys):
    blocks = code_blocks(name)
    assert blocks, f"docs/{name} has no python code block"
    cwd = os.getcwd()
    # The scripts use paths relative to the repository root and may write files there;
    # run them from a scratch copy of the root's examples/ so nothing is left behind.
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    os.chdir(tmp_path)
    try:
        for block in blocks:
            exec(compile(block, f"docs/{name}", "exec"), {"__name__": "__main__"})
    finally:
        os.chdir(cwd)
    out = capsys.readouterr().out
    assert out.strip(), "the docs' script printed nothing"
