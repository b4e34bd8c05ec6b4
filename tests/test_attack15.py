"""Attacks on the relevance work of issue 15 and the agent hooks of issue 16, with the
``evidence`` model (lane attack15). Each test is one input found to break a promise of the
issues, written as the behaviour the issues promise; those that fail today are marked
``xfail(strict=True)`` with what happens instead, so the lead can remove the mark with the fix.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from talos.cli.init import example_dir
from talos.hooks.context import Responder
from talos.memory import Memory
from talos.render import size

EVIDENCE = 'model = "evidence"\n'


def home_of(
    tmp_path: Path,
    memory: str | None = None,
    skills: dict[str, str] | None = None,
    config: str = EVIDENCE,
    name: str = "home",
) -> Path:
    home = tmp_path / name
    home.mkdir()
    if memory is not None:
        (home / "memory.md").write_text(memory, encoding="utf-8")
    if skills:
        (home / "skills").mkdir()
        for fname, text in skills.items():
            (home / "skills" / fname).write_text(text, encoding="utf-8")
    (home / "talos.toml").write_text(config, encoding="utf-8")
    return home


def example_home(tmp_path: Path, config: str = EVIDENCE) -> Path:
    """The quickstart's home (``talos init --example``) with the evidence model."""
    src = example_dir()
    home = home_of(tmp_path, (src / "memory.md.example").read_text(encoding="utf-8"), None, config)
    shutil.copytree(src / "skills", home / "skills")
    return home


def facts(*lines: str) -> str:
    return "".join(f"- {line}\n" for line in lines)


def skill(name: str, description: str, body: str, extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n{body}\n"


def texts(home: Path, query: str, **kw: object) -> list[str]:
    return [r.text for r in Memory(home, model="evidence").recall(query, **kw).picked]


def bodies(home: Path, query: str) -> list[str]:
    """The names of the skills whose body the block delivers."""
    got = Memory(home, model="evidence").recall(query).picked
    return [r.node.name for r in got if r.body]


#: A person's small home (a new user's: far below the small-home bound of 100 candidates).
THREE = facts(
    "I use vim for editing",
    "The billing service deploys on fridays",
    "Alice reviews the deploy scripts",
)

#: The classic list of the most common English nouns, verbs and adjectives; none is a stop word.
_COMMON = """time person year way day thing man world life hand part child eye woman place work
week case point government company number group problem fact get make go know take see come
think look want give use find tell ask seem feel try leave call good new first last long great
little old right big high different small large next early young important bad able need help
set run change show start keep let put mean turn move play live believe bring happen write
provide sit stand lose pay meet include continue learn lead understand watch follow stop create
speak read allow add spend grow open walk win offer remember love consider appear buy wait
serve die send expect build stay fall cut reach kill remain suggest raise pass sell require
report decide pull file code data list name line page test fix issue"""
COMMON = _COMMON.split()


# -- 1. unrelated queries get rows ---------------------------------------------------------


def test_a_small_home_gives_nothing_for_a_task_sharing_one_common_word(tmp_path: Path) -> None:
    """Held since the background prior (evidence.language_idf): with the small-home rule a
    2-term query sharing one word with a fact (df 1) scored 0.4545/2 x sqrt(2 x 4.21) = 0.66
    >= FLOOR 0.65, so 'how do I use docker' got the vim fact; "use" now weighs its idf in
    ordinary text, 2.77, and the fact scores 0.48."""
    home = home_of(tmp_path, THREE)
    assert texts(home, "how do I use docker") == []
    assert texts(home, "when does the billing service deploy") == [
        "The billing service deploys on fridays",
        "Alice reviews the deploy scripts",  # holds "deploy": evidence of its own
    ]
    one = home_of(tmp_path, facts("I use vim for editing text files"), name="one")
    assert texts(one, "how do I use docker") == []
    assert texts(one, "which editor do I use, vim?") == ["I use vim for editing text files"]


@pytest.mark.xfail(
    strict=True,
    reason="'edit my photo' gets 'I use vim for editing' (0.66): 'edit' (1.2e-4 of English "
    "words) and 'photo' (1.6e-4) are as common as 'answer' (1.5e-4) and 'format' (6e-5) of "
    "the quickstart's 'how should I format your answers', which must find its fact (0.66): "
    "no rule on word frequency separates the two",
)
def test_a_small_home_gives_nothing_for_a_task_sharing_one_stem(tmp_path: Path) -> None:
    home = home_of(tmp_path, THREE)
    assert texts(home, "edit my photo") == []  # "edit" ~ "editing"


@pytest.mark.xfail(
    strict=True,
    reason="a line of 144 common words is delivered alone for 4 of 6 unrelated coding chores "
    "(the issue's own 'set up a new python project with lint' among them)",
)
def test_a_line_of_common_words_is_no_evidence_for_unrelated_chores(tmp_path: Path) -> None:
    stuffed = " ".join(COMMON)
    home = home_of(
        tmp_path,
        facts(
            "Keep each answer short and in English",
            "The billing service deploys on fridays",
            "Alice reviews the deploy scripts",
            "The new office opens in March",
            "My cat is called Miso",
            stuffed,
        ),
    )
    assert texts(home, "when does the billing service deploy") == [
        "The billing service deploys on fridays"
    ]
    got = {
        q: texts(home, q)
        for q in (
            "set up a new python project with lint",
            "find large files on disk",
            "write a unit test for the parser",
            "make the build faster",
            "rename a git branch",
            "reverse a linked list",
        )
    }
    assert got == {q: [] for q in got}


def test_frontmatter_keys_are_not_words_of_a_skill(tmp_path: Path) -> None:
    """'description' reached all four skills of the quickstart home through their frontmatter
    key. 'what is your name' still reaches the skills whose bodies say "name": a one-word query
    matched in the text, the kind of break of the small-home test above."""
    home = example_home(tmp_path)
    assert texts(home, "description") == []
    assert texts(home, "source scope") == []


@pytest.mark.xfail(
    strict=True,
    reason="in the quickstart home 'fix my bicycle tire' gets the log-triage and rust-upgrade "
    "skills (both say 'fix'; 0.66, 0.63), 'upgrade my phone' the rust-upgrade row (0.82); the "
    "background prior leaves both: 'fix' (1.2e-4 of English words) keeps its small-home idf "
    "4.21 (its cap would be 5.3), and 'upgrade' (1.7e-5) is rarer than 'phone' (2.3e-4)",
)
def test_the_quickstart_home_gives_nothing_for_unrelated_tasks(tmp_path: Path) -> None:
    home = example_home(tmp_path)
    assert texts(home, "write a poem about the sea") == []
    assert texts(home, "fix my bicycle tire") == []
    assert texts(home, "upgrade my phone") == []


def test_the_quickstart_block_holds_only_what_the_query_is_about(tmp_path: Path) -> None:
    """Held since main's 8f08bba (untagged lines are in no context): before it, 'how should I
    format your answers' and 'short story' delivered the next line, 'Deploy region is
    eu-west-1 ...' (seed 0.0, score 0.17)."""
    home = example_home(tmp_path)
    short = "The person prefers short answers with the command first, explanation after"
    assert texts(home, "how should I format your answers") == [short]
    assert texts(home, "short story") in ([], [short])  # never the deploy region


ZH = facts(
    "画流程图用 mermaid,节点名不要带括号",
    "用户喜欢简洁的回答,先给命令再解释",
    "部署区域是 eu-west-1,测试环境端口 8080",
    "我的猫叫米索",
    "不知道怎么做的时候先问我",
    "为什么要写测试:防止回归",
    "这个项目用 python 3.12",
)


def test_chinese_function_words_are_no_evidence(tmp_path: Path) -> None:
    """The bigrams of 这个 / 什么 / 怎么 matched: 'why is this function slow' got 'why write
    tests'. Held since the analyzer drops bm25s's Chinese stop words (analyzer.cjk_stop_words)."""
    home = home_of(tmp_path, ZH)
    assert texts(home, "部署区域") == ["部署区域是 eu-west-1,测试环境端口 8080"]
    for q in ("这个函数为什么很慢", "我的电脑为什么很慢", "怎么做蛋糕"):
        assert texts(home, q) == [], q


def test_a_line_of_chinese_function_words_is_no_evidence_for_chores(tmp_path: Path) -> None:
    """A line of Chinese function words was delivered for 11 of 15 coding chores. Held since
    the analyzer drops bm25s's Chinese stop words."""
    five = facts(
        "画流程图用 mermaid,节点名不要带括号",
        "用户喜欢简洁的回答,先给命令再解释",
        "部署区域是 eu-west-1,测试环境端口 8080",
        "我的猫叫米索",
        "周二部署商店服务",
    )
    filler = (
        "我们可以怎么做什么这个那个没有就是还是因为所以如果但是一下帮我一个问题请问为什么如何需要"
    )
    home = home_of(tmp_path, five + facts(filler))
    chores = (
        "帮我写一个排序函数",
        "解释一下这个错误",
        "怎么安装 docker",
        "如何合并两个字典",
        "请问怎么删除远程分支",
        "我需要一个读取文件的例子",
        "这个报错是什么意思",
    )
    got = {q: texts(home, q) for q in chores}
    assert got == {q: [] for q in chores}


# -- 1b. clearly relevant facts the floor drops --------------------------------------------

DEPLOYS = facts(
    "Deploy region is eu-west-1",
    "Never deploy on fridays; deploy on tuesdays",
    "Alice approves each deploy",
    "The cat is called Miso",
)


def test_every_fact_holding_a_one_word_query_is_delivered(tmp_path: Path) -> None:
    """Held since main's 9c60c0f (a row holding WHOLE of the query joins the block): before
    it, for 'deploy' the two facts that say it once (seed 0.45, evidence 0.84) were cut by
    the relative floor under the one that says it twice (tf 2: seed 0.625)."""
    home = home_of(tmp_path, DEPLOYS)
    want = [
        "Never deploy on fridays; deploy on tuesdays",
        "Deploy region is eu-west-1",
        "Alice approves each deploy",
    ]
    assert texts(home, "deploy") == want
    assert texts(home, "deploys") == want


PERSON = facts(
    "I use vim with the gruvbox theme for editing",
    "The work project uses Python 3.12 and poetry",
    "We deploy the shop on Tuesdays after the standup",
    "The staging database is postgres 16 on port 5433",
    "I am learning Rust in my spare time",
    "Time zone: Europe/Berlin",
    "The deploy runs at 2am",
    "Our catalogue has 4,000 products",
)


def test_a_second_common_word_does_not_hide_the_facts_of_the_first(tmp_path: Path) -> None:
    """Held since the background prior: "time" (held by one fact of a small home) weighed
    4.21 in the query's evidence, as much as a word no one uses, and 'deployment time' got
    nothing (0.62 < 0.65); it weighs its idf in ordinary text now, 2.38 (0.68)."""
    home = home_of(tmp_path, PERSON)
    both = ["We deploy the shop on Tuesdays after the standup", "The deploy runs at 2am"]
    assert texts(home, "when do we deploy") == both
    for q in ("deployment time", "deploy time"):
        assert set(both) <= set(texts(home, q)), q


@pytest.mark.xfail(
    strict=True,
    reason="two deploy facts (df 2) and a 2-term query: 'schedule' (7.5e-5 of English words, "
    "no node holds it) keeps its 4.21, seed 0.4545 x 3.7 / 7.9 = 0.21, evidence 0.60 < 0.65",
)
def test_a_second_word_does_not_hide_the_facts_of_the_first(tmp_path: Path) -> None:
    home = home_of(tmp_path, PERSON)
    both = ["We deploy the shop on Tuesdays after the standup", "The deploy runs at 2am"]
    assert set(both) <= set(texts(home, "deploy schedule"))


@pytest.mark.xfail(
    strict=True,
    reason="British/American spelling and one shared word of three: 'how many products in "
    "the catalog' gets nothing of 'Our catalogue has 4,000 products'",
)
def test_catalog_finds_catalogue(tmp_path: Path) -> None:
    home = home_of(tmp_path, PERSON)
    assert texts(home, "how many products in the catalog") == ["Our catalogue has 4,000 products"]


def test_resume_finds_resume_with_accents(tmp_path: Path) -> None:
    """There was no accent folding: 'where is my resume' missed 'My résumé is in ~/docs/cv.pdf'.
    Held since the analyzer drops a word's combining marks (analyzer.unaccented)."""
    home = home_of(tmp_path, facts("My résumé is in ~/docs/cv.pdf", "I use vim"))
    assert texts(home, "résumé") == ["My résumé is in ~/docs/cv.pdf"]
    assert texts(home, "where is my resume") == ["My résumé is in ~/docs/cv.pdf"]


def test_a_chinese_question_finds_the_chinese_fact(tmp_path: Path) -> None:
    """'我们部署在哪里' got nothing of '部署区域是 eu-west-1…' (0.55 < 0.65). Held since a
    bigram of two stop characters is no term: they no longer dilute the query's evidence."""
    home = example_home(tmp_path)
    assert texts(home, "where do we deploy") == [
        "Deploy region is eu-west-1; the staging service listens on port 8080"
    ]
    for q in ("我们部署在哪里", "部署到哪里", "服务部署在哪"):
        assert texts(home, q) == ["部署区域是 eu-west-1,测试环境端口 8080"], q


# -- 2. skill bodies -----------------------------------------------------------------------

CSV = skill(
    "csv-merge",
    "Merge several csv files into one table, aligned on a key column",
    "1. Read every file.\n2. Outer-join on the key column.",
)


def test_a_lone_skill_gets_no_body_for_its_frontmatter_keys(tmp_path: Path) -> None:
    """Held since frontmatter keys are no words of a skill (``sources.skills.frontmatter_as_text``):
    a lone skill got its whole body for 'what is your name' and 'description'."""
    home = home_of(tmp_path, facts("I use vim"), {"csv-merge.md": CSV})
    for q in ("what is your name", "description"):
        assert bodies(home, q) == [], q
    assert texts(home, "name a dog") == []


def test_the_quickstart_home_gives_no_body_for_an_unrelated_task(tmp_path: Path) -> None:
    """Held since frontmatter keys are no words: 'change my name' got the rust-upgrade body
    ('change' in its body + the key 'name')."""
    home = example_home(tmp_path)
    assert bodies(home, "upgrade rust dependencies") == ["rust-upgrade"]  # its own task
    assert bodies(home, "upgrade my phone") == []
    assert bodies(home, "change my name") == []


def test_a_description_of_repeated_common_words_earns_no_body(tmp_path: Path) -> None:
    """Held since main's BODY_FLOOR 0.9 (c61ab77); with 0.59 this skill earned its body for
    all three queries."""
    helper = skill("helper", " ".join(w for w in COMMON[:60] for _ in range(2)), "Do it.")
    k8s = skill(
        "k8s-rollout",
        "Roll out a new release to the kubernetes cluster with kubectl",
        "1. kubectl apply\n2. kubectl rollout status",
    )
    home = home_of(
        tmp_path, PERSON, {"csv-merge.md": CSV, "k8s-rollout.md": k8s, "helper.md": helper}
    )
    for q in ("make this function faster", "how do I make sourdough bread"):
        assert bodies(home, q) == [], q
    assert bodies(home, "what time is it in tokyo") == []


@pytest.mark.xfail(
    strict=True,
    reason="the issue's own home shape: 'set up a new python project with lint' is empty now, "
    "but 'apply for a new job' gets the whole kubernetes-rollout body through 'new' + 'apply' "
    "(its body): 0.94 >= BODY_FLOOR 0.9 with the background prior ('new' weighs 2.64, 'apply' "
    "keeps 4.21), 1.08 without; 'release notes for my band's new album' 0.99 -> 0.87 is held",
)
def test_the_kubernetes_body_is_not_for_new_jobs_or_albums(tmp_path: Path) -> None:
    k8s = skill(
        "kubernetes-rollout",
        "Roll out a new release to the cluster with kubectl",
        "1. kubectl apply -f release.yaml\n2. kubectl rollout status deploy/app\n"
        "3. roll back with kubectl rollout undo",
    )
    pg = skill(
        "postgres-restore",
        "Restore a postgres database from a nightly dump",
        "1. pg_restore -d app dump.sql\n2. check row counts",
    )
    home = home_of(
        tmp_path,
        facts("Keep each answer short and in English", "The billing service deploys on fridays"),
        {"kubernetes-rollout.md": k8s, "postgres-restore.md": pg},
    )
    assert bodies(home, "roll out a new release with kubectl") == ["kubernetes-rollout"]
    assert texts(home, "set up a new python project with lint") == []
    assert bodies(home, "apply for a new job") == []
    assert bodies(home, "release notes for my band's new album") == []


def test_the_exact_description_of_a_skill_earns_its_body(tmp_path: Path) -> None:
    """Held since a near tie of the lead rule is the skill whose label holds every query
    term (relevance.lead_skill, holds_all): lead 1.17 < BODY_LEAD 1.2 gave no body."""

    def deploy(where: str, values: str) -> str:
        return skill(
            f"deploy-{where}",
            f"Deploy the billing service to the {where} cluster with helm and check the rollout",
            f"1. helm upgrade --install billing ./chart -f {values}\n2. kubectl rollout status",
        )

    home = home_of(
        tmp_path,
        facts("I use vim"),
        {
            "deploy-staging.md": deploy("staging", "staging.yaml"),
            "deploy-production.md": deploy("production", "prod.yaml"),
        },
    )
    assert bodies(home, "deploy staging") == ["deploy-staging"]
    exact = "Deploy the billing service to the {} cluster with helm and check the rollout"
    assert bodies(home, exact.format("staging")) == ["deploy-staging"]
    assert bodies(home, exact.format("production")) == ["deploy-production"]


@pytest.mark.xfail(
    strict=True,
    reason="Chinese: in the quickstart home '画流程图' (draw a flowchart), '用 mermaid 画流程图' "
    "and '怎么画流程图' get only the fact '画流程图用 mermaid…': the mermaid-flow skill (evidence "
    "1.40, seed 0.33 < 0.8 x the fact's 0.54 and < WHOLE) is cut by the relative floor, so "
    "no row and no body, while 'draw a flowchart' gets the body; '画一个函数的流程图' gets the "
    "skill's row without its body",
)
def test_a_chinese_query_of_the_skills_own_words_earns_its_body(tmp_path: Path) -> None:
    home = example_home(tmp_path)
    assert bodies(home, "draw a flowchart") == ["mermaid-flow"]
    assert bodies(home, "给函数或模块画 mermaid 流程图") == ["mermaid-flow"]
    for q in ("画流程图", "用 mermaid 画流程图", "怎么画流程图", "画一个函数的流程图"):
        assert bodies(home, q) == ["mermaid-flow"], q


# -- 3. filler counts as use ---------------------------------------------------------------


def test_a_neighbour_that_matches_no_query_word_is_no_hit(tmp_path: Path) -> None:
    """Held since main's relevance.NEIGHBOUR (54ee0c1); before it this reflect line of the
    same day was delivered by contiguity with seed 0.0 (score 0.17), a hit in all 9
    recalls, and dead() proposed nothing."""
    home = home_of(
        tmp_path,
        "- Keep answers short, the command first <!-- reflect 2026-09-14 -->\n"
        "- Deploy region is eu-west-1 <!-- reflect 2026-09-14 -->\n"
        "- The cat is called Miso\n",
    )
    mem = Memory(home, model="evidence")
    for _ in range(9):
        got = mem.recall("how should I format your answers")
    assert [r.text for r in got.picked] == ["Keep answers short, the command first"]
    assert mem.usage()["fact:Deploy region is eu-west-1"].hits == 0
    assert [s.text for s in mem.dead()] == ["Deploy region is eu-west-1"]


def test_a_skill_matched_only_by_its_frontmatter_is_no_hit(tmp_path: Path) -> None:
    """Held since frontmatter keys are no words: a talos-written skill matched only by its key
    'name' got its body and a hit for 'what should I name this variable' (8 of 8)."""
    home = home_of(
        tmp_path,
        facts("I use vim for editing"),
        {
            "csv-merge.md": skill(
                "csv-merge", "Merge csv files on a key column", "1. Join.", "source: reflect\n"
            )
        },
    )
    mem = Memory(home, model="evidence")
    for _ in range(8):
        got = mem.recall("what should I name this variable")
    assert got.picked == []
    assert [s.kind for s in mem.dead()] == ["skill"]


def test_dead_proposes_a_fact_that_only_a_common_word_matched(tmp_path: Path) -> None:
    """Held since the background prior: a talos-written fact sharing only 'use' with the
    queries was hit in 4 of 8 recalls ('how do I use docker', 'use a venv'), so dead() never
    proposed it (issue 15 item 6)."""
    home = home_of(
        tmp_path,
        "- I use vim for editing <!-- reflect 2026-09-14 -->\n"
        "- The billing service deploys on fridays\n",
    )
    mem = Memory(home, model="evidence")
    for q in ("how do I use docker", "use a venv", "use tabs or spaces", "use git lfs") * 2:
        mem.recall(q)
    assert mem.usage()["fact:I use vim for editing"].hits == 0
    assert [s.text for s in mem.dead()] == ["I use vim for editing"]


# -- why-not: the same analyzer, and the floor's cut named ---------------------------------


def test_why_not_uses_the_analyzer(tmp_path: Path) -> None:
    """why_not matched excluded records by SPEC §4 keywords: 'answers' and 'ａｎｓｗｅｒ' named
    nothing of an expired 'answer' fact."""
    home = home_of(
        tmp_path,
        "- Keep each answer short <!-- user 2026-01-01 until=2026-02-01 -->\n"
        "- The cat is called Miso\n",
    )
    mem = Memory(home, model="evidence")
    want = [("expired", "Keep each answer short")]
    assert [(w.reason, w.node.text) for w in mem.why_not("answer")] == want
    assert [(w.reason, w.node.text) for w in mem.why_not("answers")] == want
    assert [(w.reason, w.node.text) for w in mem.why_not("ａｎｓｗｅｒ")] == want


def test_why_not_names_what_the_floor_cut(tmp_path: Path) -> None:
    """'deployment time' recalled nothing and why_not named nothing: the floor was no reason
    it knew; and it listed a fact sharing no word as beyond-k. (Since the background prior
    'deployment time' finds both deploy facts; a query sharing one word of four is cut.)"""
    home = home_of(tmp_path, PERSON + facts("My cat Miso needs her medicine every morning"))
    mem = Memory(home, model="evidence")
    query = "deployment of kubernetes helm charts"
    assert mem.recall(query).picked == []
    named = {w.node.text: w.reason for w in mem.why_not(query)}
    assert "The deploy runs at 2am" in named
    assert "My cat Miso needs her medicine every morning" not in named


# -- 4. budget -----------------------------------------------------------------------------


def test_a_budget_never_keeps_a_lower_row_instead_of_the_best(tmp_path: Path) -> None:
    """Held since the first row is cut to fit, never replaced by a lower one
    (render.fit_block step 3)."""
    top = "The release checklist: deploy " + " ".join(f"step{i}" for i in range(100))
    home = home_of(tmp_path, facts(top[:590], "Alice reviews the deploy scripts"))
    assert len(texts(home, "deploy")) == 2
    got = texts(home, "deploy", budget=300)
    assert got == [top[:590]]


@pytest.mark.parametrize("unit", ["chars", "utf16", "bytes"])
def test_the_budget_holds_for_wide_characters(tmp_path: Path, unit: str) -> None:
    """Held: astral characters (2 UTF-16 units, 4 bytes) and CJK in facts and a body."""
    wide = "deploy 😀𝔘 部署数据 café " * 30
    home = home_of(
        tmp_path,
        facts(*(f"{wide[: 60 + 40 * i]} {i}" for i in range(6))),
        {"d.md": skill("deploy-data", "deploy 部署 data", "\n".join([wide] * 20))},
    )
    mem = Memory(home, model="evidence")
    for budget in (200, 233, 401, 777, 1500):
        text = mem.recall("deploy 部署", budget=budget, unit=unit).text
        assert size(text, unit) <= budget, (budget, size(text, unit))


# -- 5. hooks ------------------------------------------------------------------------------

HOOKS = EVIDENCE + "[hooks]\nserver = false\ntimeout = 30\n"


@pytest.mark.xfail(
    strict=True,
    reason="through the hooks the quickstart home gives context for unrelated prompts: "
    "claude-code 'fix my bicycle tire' two skill rows, gemini 'upgrade my phone' the whole "
    "rust-upgrade body",
)
def test_a_hook_gives_no_context_for_an_unrelated_prompt(tmp_path: Path) -> None:
    home = example_home(tmp_path, HOOKS)
    r = Responder(str(home))
    try:
        ok = {"hook_event_name": "UserPromptSubmit", "prompt": "which port does staging use"}
        assert "port 8080" in r.answer("claude-code", ok)
        cc = {"hook_event_name": "UserPromptSubmit", "prompt": "fix my bicycle tire"}
        assert r.answer("claude-code", cc) == ""
        gem = {"hook_event_name": "BeforeAgent", "prompt": "upgrade my phone"}
        assert r.answer("gemini", gem) == ""
    finally:
        r.close()


#: Prompts a person types to an agent mid-task: they name no task, so no memory is about them.
CONTINUE = (
    "yes",
    "continue",
    "try again",
    "fix it",
    "run it",
    "now the tests",
    "and the other file?",
)


def test_a_hook_gives_no_context_for_a_continuation_prompt(tmp_path: Path) -> None:
    """The hook answered every prompt: 7 of 28 continuation prompts got context on the
    quickstart home, 4 a whole skill body. Held since a hook asks only a prompt that holds
    two distinct terms (hooks.context.MIN_PROMPT_TERMS); a prompt naming a task still gets
    its block."""
    home = example_home(tmp_path, HOOKS)
    r = Responder(str(home))
    try:
        got = {
            q: r.answer("claude-code", {"hook_event_name": "UserPromptSubmit", "prompt": q})
            for q in CONTINUE
        }
        named = {"hook_event_name": "UserPromptSubmit", "prompt": "upgrade rust dependencies"}
        assert "rust-upgrade" in r.answer("claude-code", named)
    finally:
        r.close()
    assert got == {q: "" for q in CONTINUE}


LONG_PROMPT = (
    "I'm working on the billing service today and I need to get the new invoice export "
    "feature ready. Can you help me write the deploy script changes, update the tests, and "
    "tell me on which day we deploy it? Also check the CI config and make sure the lint "
    "passes before I open the PR."
)


def test_a_long_prompt_still_gets_the_fact_it_asks_for(tmp_path: Path) -> None:
    """A prompt as agents send it (55 words) asking on which day the billing service deploys
    got nothing: the evidence score falls as 1/sqrt(Z) with the prompt's length (the fact's
    0.51 < 0.65). The long-query rule (relevance.HELD: what the best row holds, in idf
    units) delivers it; it was a strict xfail."""
    home = home_of(tmp_path, PERSON + THREE, config=HOOKS)
    fact = "The billing service deploys on fridays"
    short = "Which day does the billing service deploy? I need the invoice export ready."
    assert fact in texts(home, short)
    assert fact in texts(home, LONG_PROMPT)
    r = Responder(str(home))
    try:
        event = {"hook_event_name": "UserPromptSubmit", "prompt": LONG_PROMPT}
        assert fact in r.answer("claude-code", event)
    finally:
        r.close()


def test_a_reply_the_hook_never_read_is_no_hit(tmp_path: Path) -> None:
    """The resident server counted usage after its reply whether or not the reply reached
    the hook: a hook that gave up at its deadline left the rows it never delivered counted
    as hits (sendall's error was suppressed, then the counts flushed)."""
    import json
    import os
    import subprocess
    import sys
    import time

    from talos.hooks import client
    from talos.hooks.state import hook_state

    home = home_of(tmp_path, THREE, config=EVIDENCE + "[hooks]\ntimeout = 30\n")
    env = {  # the talos these tests imported (CI: an installed copy beside the checkout)
        **os.environ,
        "PYTHONPATH": str(Path(client.__file__).resolve().parents[2]),
        "PYTHONSAFEPATH": "1",  # `python -m` would put the checkout first: a restart, no stop
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "talos.hooks.server", "--home", str(home)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        state = hook_state(str(home))
        end = time.monotonic() + 30
        while client.ping(str(home)) is None and time.monotonic() < end:
            time.sleep(0.05)
        event = {"hook_event_name": "UserPromptSubmit", "prompt": "when do we deploy billing"}
        s = client._connect(state)
        assert s is not None
        s.sendall(client._request("answer", "claude-code", state, json.dumps(event).encode()))
        s.close()  # the hook's deadline passed: it exits without reading the answer
        key = "fact:The billing service deploys on fridays"
        # one connection at a time: the stop is served after the answer and its counts
        stop = client._connect(state)
        assert stop is not None
        assert client._exchange(stop, client._request("stop", "-", state), 30) == b"stopped\n"
        server.wait(timeout=30)
        stat = Memory(home, model="evidence").usage().get(key)
        assert stat is None or stat.hits == 0
    finally:
        if server.poll() is None:
            client.stop(str(home), wait=0)
            server.wait(timeout=30)
