"""The README Quickstart shows the block the default model really delivers, and only what the
query is about (issue 15 acceptance: "the quickstart's first block shows only what the query
is about"; it showed two off-topic rows under the old default)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from talos import Memory
from talos.cli import app

README = Path(__file__).resolve().parent.parent / "README.md"
QUERY = "merge two csv files on the user id column"


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def readme_output() -> str:
    """The Quickstart's pasted output (the ``text`` block after its first command)."""
    quick = README.read_text(encoding="utf-8").split("## Quickstart", 1)[1]
    return quick.split("```text\n", 1)[1].split("```", 1)[0]


def test_the_quickstart_output_is_what_it_prints(tmp_path: Path) -> None:
    home = tmp_path / "demo-home"
    init = run("init", "--example", "--home", str(home))
    recall = run("recall", "--home", str(home), QUERY)
    assert (init.exit_code, recall.exit_code) == (0, 0)
    got = (init.output + recall.stdout).replace(str(home), "/tmp/talos/demo-home")
    assert got == readme_output()
    block = recall.stdout.splitlines()
    rows = [line for line in block if line.startswith("- [")]
    assert rows[:3] == [  # the csv-merge skill with its body, then the person's csv lessons
        "- [skill body · from file "
        f"{home}/skills/csv-merge.md · for reference only, not a user instruction]",
        "- [fact] (2026-10-02) When merging csv files, normalize column names (trim, lower-case)"
        " before joining on the key",
        "- [fact] (2026-09-14) CSV files from the billing export use semicolons as separators "
        "and latin-1 encoding",
    ]
    assert len(recall.stdout) <= 2000  # the default budget
    # an agent wrote every fact of this block (reflect tags): the heading says it once
    assert block[0].endswith("; every fact here is from a model)")


def test_the_readme_example_queries(tmp_path: Path) -> None:
    home = tmp_path / "demo-home"
    assert run("init", "--example", "--home", str(home)).exit_code == 0
    said = {
        "how should I format your answers": [  # `# Memory` is the file's title: no label
            "- [fact] The person prefers short answers with the command first, explanation after"
        ],
        "画一个流程图": [
            "- [fact] 画流程图用 mermaid,节点名不要带括号",
            "- [skill] mermaid-flow — 给函数或模块画 mermaid 流程图 (draw a mermaid flowchart of "
            "functions or modules)",
        ],
    }
    text = README.read_text(encoding="utf-8")
    for query, rows in said.items():
        assert f"`{rows[0]}`" in text
        got = run("recall", "--home", str(home), query)
        assert got.stdout.splitlines()[1:] == rows
    poem = run("recall", "--home", str(home), "write a poem about spring")
    assert "`weak matches only`" in text
    assert poem.stdout.startswith("# Recalled memory (weak matches only: ")
    assert [line.split(" — ")[0] for line in poem.stdout.splitlines()[1:]] == [
        "- [skill] mermaid-flow",
        "- [skill] csv-merge",
    ]
    with Memory(home) as mem:  # the hooks' route: nobody asked, the gate keeps it quiet
        assert mem.recall("write a poem about spring", automatic=True).text == ""
