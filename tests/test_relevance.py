"""The relevance floor and the skill body gate (``talos.selection.relevance``, design §6.1 rules 2
and 5,
issue 15 items 2-3), on small homes and on hand-made activations with exact values; then, with
the default ``evidence`` model on homes written by hand, what a query gets: nothing for a task
the home knows nothing about, every fact that holds the query, a body only for a skill the
query is about, a hit only for what was delivered, and the analyzer on words a person writes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import HOOKS, THREE, ZH, block_rows, bodies, example_home, facts, home_of, skill, texts

from talos.hooks.context import Responder
from talos.memory import Memory
from talos.ranking import contiguity as C
from talos.ranking import evidence as E
from talos.ranking.analyzer import analyze
from talos.selection import relevance as R

FACTS = [
    "Keep each answer short and in English",
    "The billing service deploys on fridays",
    "Alice reviews the deploy scripts",
    "The new office opens in March",
]
SKILLS = [
    "kubernetes-rollout — roll out a new release to the cluster with kubectl",
    "postgres-restore — restore a postgres database from a nightly dump",
]


def block(texts: list[str], query: str, graph: C.Links | None = None) -> list[int]:
    idx = E.TermIndex.of_texts(texts, [[t] for t in texts])
    g = graph or C.no_links(idx.n)
    ev = E.activate(idx, E.query_vector(idx, analyze(query)), graph=g)
    top = [int(i) for i in np.argsort(-ev.final, kind="stable")[:5]]
    return R.deliver(ev, top)


def test_an_unrelated_query_gets_no_rows() -> None:
    """Issue 15: every block was filled to k; "write a new poem" shares only "new" with one
    fact (seed 1/2.2 of a quarter of the query: 0.114, evidence score 0.122 < 0.65)."""
    assert block(FACTS, "write a new poem about spring") == []
    assert block(FACTS, "book a table at an italian restaurant") == []  # no term at all
    # the deploy-scripts fact holds "deploy" of six terms: evidence 0.077 < ROW, its own floor
    assert block(FACTS, "when does the billing service deploy") == [1]


def test_the_floor_is_what_empties_the_block() -> None:
    idx = E.TermIndex.of_texts(FACTS, [[t] for t in FACTS])
    ev = E.activate(idx, E.query_vector(idx, analyze("write a new poem about spring")))
    assert ev.seeds[3] == pytest.approx(1 / 2.2 / 4)
    assert ev.seeds[3] * ev.scale < R.FLOOR
    top = [3, 0, 1, 2]
    assert R.deliver(ev, top) == []
    assert R.deliver(ev, top, floor=0.0) == [3]


def test_a_whole_match_is_evidence_whatever_z() -> None:
    """Candidate statistics make "deploy" small (Z = ln 1.2 over two candidates): the seed of
    a whole match (1/2.2 ≥ 0.4) still delivers both deploy facts."""
    assert block(FACTS, "deploy") == [1, 2]


def ev_of(seeds: list[float], final: list[float], z: float) -> E.Evidence:
    return E.Evidence(np.array(final), np.array(seeds), z)


def test_a_lower_row_is_never_cut_because_of_a_higher_one() -> None:
    """design §6.1 rule 5. The failing input: the relative floor (a row's seed ≥ 0.9 × the best
    seed) cut rows 1 and 2 (0.32, 0.3 of 0.35; 0.1 of 0.9); a reader given that block
    answered 40% of held-out LoCoMo questions, given the top 10 74%. Each row is delivered
    by its own evidence score (√Z = 2: 0.64, 0.6; 0.2), whatever the best row scores."""
    ev = ev_of([0.35, 0.32, 0.3], [0.35, 0.32, 0.3], 4.0)
    assert R.deliver(ev, [0, 1, 2]) == [0, 1, 2]
    for best in (0.35, 0.9, 0.99):  # a better best row changes nothing below it
        ev = ev_of([best, 0.1, 0.05], [best, 0.1, 0.05], 4.0)
        assert R.deliver(ev, [0, 1, 2]) == [0, 1, 2]  # 0.2 and 0.1 ≥ ROW
    # row 2's own evidence 0.098 is under ROW whatever the others: cut by its own floor
    ev = ev_of([0.9, 0.1, 0.049], [0.9, 0.1, 0.049], 4.0)
    assert R.deliver(ev, [0, 1, 2]) == [0, 1]
    assert R.deliver(ev, [0, 1, 2], row=0.09) == [0, 1, 2]


def test_a_row_holding_the_whole_query_joins_the_block() -> None:
    """ "upgrade rust dependencies" on the example home delivered the rust-upgrade skill (seed
    0.568) and cut the cargo fact that holds every query word (seed 0.455 < 0.9 × 0.568)."""
    ev = ev_of([0.57, 0.2, 0.455], [0.57, 0.3, 0.455], 4.0)
    assert R.deliver(ev, [0, 1, 2]) == [0, 1, 2]
    ev = ev_of([0.57, 0.0, 0.455], [0.57, 0.01, 0.04], 4.0)  # spread below its own floor
    assert R.deliver(ev, [0, 1, 2]) == [0, 2]  # the whole match stays, by its seed


def test_a_row_reached_by_spreading_alone_is_no_evidence() -> None:
    """A neighbour that holds no query term (seed 0) is not delivered, however much activation
    a contiguity edge handed it: "which ubuntu version does the ci runner use" delivered "the
    staging database is called pelican", the line above the runner fact, and counted it a
    hit, so `dead` never proposed it. A row holding one query word is delivered on its own
    evidence."""
    ev = ev_of([0.5, 0.0, 0.01], [0.3, 0.2, 0.05], 4.0)
    assert R.deliver(ev, [0, 1, 2]) == [0, 2]


def test_a_long_query_has_evidence_by_what_its_best_row_holds() -> None:
    """A dialogue's context (MADial: a median of 54 terms, Z 157) spreads its evidence thin:
    the best seed 0.05 scores 0.05 × √100 = 0.5 < FLOOR, and 84% of MADial en's answerable
    context queries got an empty block. It holds 5 idf units of the query (≥ HELD)."""
    assert R.HELD == 4.5
    ev = ev_of([0.05, 0.02], [0.05, 0.02], 100.0)
    assert R.deliver(ev, [0, 1]) == [0, 1]
    ev = ev_of([0.04, 0.02], [0.04, 0.02], 100.0)  # 4.0 idf units: no evidence
    assert R.deliver(ev, [0, 1]) == []
    assert R.deliver(ev, [0, 1], held=4.0) == [0, 1]


def gate(query: str) -> str | None:
    texts = [*SKILLS, *FACTS]
    idx = E.TermIndex.of_texts(texts, [[t] for t in texts])
    terms = analyze(query)
    ev = E.activate(idx, E.query_vector(idx, terms))
    order = [int(i) for i in np.argsort(-ev.final, kind="stable")]
    seeds, scale = E.body_evidence(idx, terms)
    best = R.earns_body(
        order, lambda i: i < len(SKILLS), ev.final, lambda i: (float(seeds[i]), scale)
    )
    return None if best is None else texts[best].split(" — ")[0]


def test_a_skill_that_matches_no_query_word_gets_no_body() -> None:
    """Issue 15: "set up a new python project with lint" got the Kubernetes rollout skill's
    body because of the word "new": it leads the other skills, but its own seed evidence
    (0.0909 × √1.44 = 0.109) is far below the floor."""
    assert gate("set up a new python project with lint") is None
    assert gate("restore the postgres database") == "postgres-restore"


def test_the_lead_alone_would_give_the_body() -> None:
    texts = [*SKILLS, *FACTS]
    idx = E.TermIndex.of_texts(texts, [[t] for t in texts])
    ev = E.activate(idx, E.query_vector(idx, analyze("set up a new python project with lint")))
    order = [int(i) for i in np.argsort(-ev.final, kind="stable")]
    assert R.lead_skill(order, lambda i: i < 2, ev.final) == 0
    assert R.earns_body(order, lambda i: i < 2, ev.final, lambda i: (0.0909, 1.2), floor=0.1) == 0


def test_the_lead_rule() -> None:
    final = [0.5, 0.45, 0.2, 0.1]
    skill = {0, 1}.__contains__
    assert R.lead_skill([0, 1, 2, 3], skill, final) is None  # 0.5 < 1.2 × 0.45
    assert R.lead_skill([0, 1, 2, 3], skill, [0.6, 0.45, 0.2, 0.1]) == 0
    assert R.lead_skill([2, 3, 0, 1], skill, [0.6, 0.1, 0.9, 0.8], k=2) is None  # beyond k
    assert R.lead_skill([0, 2, 3], {0}.__contains__, final) == 0  # a lone skill


def test_body_evidence_leaves_out_single_cjk_characters() -> None:
    """把这个函数改成异步的 reached a skill through 这 个 函 数 成 步 on a make_home.py home:
    the body evidence counts bigrams only (here 函数, the one shared bigram)."""
    texts = ["函数命名规范 — 这个项目的函数名用蛇形", "天气"]
    idx = E.TermIndex.of_texts(texts, [[t] for t in texts])
    terms = analyze("把这个函数改成异步的")
    with_uni, _z = E.seeds(idx, E.query_vector(idx, terms))
    bigrams, _scale = E.body_evidence(idx, terms)
    assert bigrams[0] < with_uni[0]
    assert (
        E.query_vector(idx, [t for t in terms if len(t) == 2]).known == 1
    )  # 函数 (这个: a stop word)


def test_a_near_tie_of_skills_is_the_one_holding_every_query_term() -> None:
    """The lead rule (best ≥ BODY_LEAD × second) is broken in a near tie only by the query's
    own terms: the best skill holds all of them and the second does not."""
    from talos.selection.relevance import lead_skill

    final = [3.10, 2.66, 0.5]  # a lead of 1.17
    skill = lambda i: i < 2  # noqa: E731
    assert lead_skill([0, 1, 2], skill, final) is None
    assert lead_skill([0, 1, 2], skill, final, holds_all=lambda i: i == 0) == 0
    assert lead_skill([0, 1, 2], skill, final, holds_all=lambda i: True) is None
    assert lead_skill([0, 1, 2], skill, final, holds_all=lambda i: i == 1) is None
    assert lead_skill([0, 1, 2], skill, [3.3, 2.66, 0.5], holds_all=lambda i: False) == 0


# -- the evidence model: a query about nothing in the home gets no rows ----------------------


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


def test_a_small_home_gives_the_fact_sharing_one_stem_of_a_two_word_task(tmp_path: Path) -> None:
    """'edit my photo' gets 'I use vim for editing' (0.66): 'edit' (1.2e-4 of English words)
    and 'photo' (1.6e-4) are as common as 'answer' (1.5e-4) and 'format' (6e-5) of the
    quickstart's 'how should I format your answers', which must find its fact (0.66): no rule
    on word frequency separates the two. Decided, the floor's trade-off (design §6.1 rule 5: a
    row that is no evidence costs a reader nothing measurable, a cut evidence row the answer)."""
    home = home_of(tmp_path, THREE)
    assert texts(home, "edit my photo") == ["I use vim for editing"]  # "edit" ~ "editing"


def test_a_line_of_every_common_word_is_weak_evidence_for_chores_in_common_words(
    tmp_path: Path,
) -> None:
    """A line of 144 common words was delivered for 4 of 6 coding chores ('set up a new python
    project with lint' among them): it holds their words. It is a *long record* (design §5.3,
    ``evidence.long_record_k``): each word it mentions once buys it less, and one chore of six
    gets it now; the person's ordinary facts are not cut by it."""
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
        "The billing service deploys on fridays",
        "Alice reviews the deploy scripts",  # holds "deploy": evidence of its own
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
    assert got == {
        "set up a new python project with lint": [],
        "find large files on disk": [stuffed],  # still over the floor
        "write a unit test for the parser": [],
        "make the build faster": [],
        "rename a git branch": [],
        "reverse a linked list": [],
    }


def test_frontmatter_keys_are_not_words_of_a_skill(tmp_path: Path) -> None:
    """'description' reached all four skills of the quickstart home through their frontmatter
    key. 'what is your name' still reaches the skills whose bodies say "name": a one-word query
    matched in the text, the kind of break of the small-home test above."""
    home = example_home(tmp_path)
    assert texts(home, "description") == []
    assert texts(home, "source scope") == []


#: The quickstart's skills whose labels say "fix" and "upgrade".
LOG_TRIAGE = (
    "log-triage — Triage an error log - group errors by pattern and time, then suggest fixes"
)
RUST_UPGRADE = "rust-upgrade — Upgrade rust dependencies and fix the build errors that follow"
CARGO_UPDATE = (
    "Run cargo update in a branch and read the lock file diff before upgrading rust dependencies"
)


def test_the_quickstart_home_gives_rows_of_a_task_word_and_no_body_for_unrelated_tasks(
    tmp_path: Path,
) -> None:
    """In the quickstart home 'fix my bicycle tire' gets the log-triage and rust-upgrade rows
    (both say 'fix'; 0.66, 0.63), 'upgrade my phone' the rust-upgrade rows (0.82): 'fix' (1.2e-4
    of English words) keeps its small-home idf 4.21, and 'upgrade' (1.7e-5) is rarer than
    'phone' (2.3e-4). Decided: a row holding a rare word of the task is evidence (design §6.1
    rule 5); no body is delivered for them (the body gate, rule 2)."""
    home = example_home(tmp_path)
    assert texts(home, "write a poem about the sea") == []
    assert texts(home, "fix my bicycle tire") == [LOG_TRIAGE, RUST_UPGRADE]
    assert texts(home, "upgrade my phone") == [RUST_UPGRADE, CARGO_UPDATE]
    assert bodies(home, "fix my bicycle tire") == bodies(home, "upgrade my phone") == []


def test_the_quickstart_block_holds_only_what_the_query_is_about(tmp_path: Path) -> None:
    """Held since main's 8f08bba (untagged lines are in no context): before it, 'how should I
    format your answers' and 'short story' delivered the next line, 'Deploy region is
    eu-west-1 ...' (seed 0.0, score 0.17)."""
    home = example_home(tmp_path)
    short = "The person prefers short answers with the command first, explanation after"
    assert texts(home, "how should I format your answers") == [short]
    assert texts(home, "short story") in ([], [short])  # never the deploy region


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


# -- a fact that holds the query is delivered; words that dilute it ----------------------------

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
    reason="decided: a bug of the floor (design §6.1 rule 5: a cut evidence row costs the "
    "answer): 'schedule', which no node holds, keeps its idf 4.21 in the query's mass, so both "
    "deploy facts fall to evidence 0.60 < 0.65; fix: a query term no node holds does not dilute "
    "a row's evidence (score against the held mass, as relevance.HELD does for long queries)",
)
def test_a_second_word_does_not_hide_the_facts_of_the_first(tmp_path: Path) -> None:
    home = home_of(tmp_path, PERSON)
    both = ["We deploy the shop on Tuesdays after the standup", "The deploy runs at 2am"]
    assert set(both) <= set(texts(home, "deploy schedule"))


@pytest.mark.xfail(
    strict=True,
    reason="decided: the same bug as 'deploy schedule' (design §6.1 rule 5): 'catalog' and "
    "'catalogue' are two terms (the analyzer has no spelling variants, §4.1), and the unheld "
    "'catalog' dilutes 'products', the word the fact holds, under the floor; fix: the held-mass "
    "rule of the 'deploy schedule' test delivers it",
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


# -- skill bodies ------------------------------------------------------------------------------

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


def test_the_kubernetes_body_is_delivered_for_a_task_in_its_words_not_for_an_album(
    tmp_path: Path,
) -> None:
    """'apply for a new job' gets the whole kubernetes-rollout body through 'new' (its label)
    and 'apply' (its body): 0.94 >= BODY_FLOOR 0.9 ('new' weighs 2.64, 'apply' keeps 4.21);
    'release notes for my band's new album' (0.87) gets its row, no body. Decided: the skill
    matches the query itself, which is what earns a body (design §6.1 rules 2 and 5)."""
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
    assert bodies(home, "apply for a new job") == ["kubernetes-rollout"]
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
    reason="decided: a bug against design §6.1 rule 5 (a row is never cut because another "
    "scored higher): '画流程图', '用 mermaid 画流程图' and '怎么画流程图' get only the fact "
    "'画流程图用 mermaid…'; the mermaid-flow skill (evidence 1.40, seed 0.33 < 0.8 x the fact's "
    "0.54) is cut by the relative floor, so no row and no body ('draw a flowchart' gets it); "
    "fix: no relative cut of a skill whose own evidence clears the absolute floor",
)
def test_a_chinese_query_of_the_skills_own_words_earns_its_body(tmp_path: Path) -> None:
    home = example_home(tmp_path)
    assert bodies(home, "draw a flowchart") == ["mermaid-flow"]
    assert bodies(home, "给函数或模块画 mermaid 流程图") == ["mermaid-flow"]
    for q in ("画流程图", "用 mermaid 画流程图", "怎么画流程图", "画一个函数的流程图"):
        assert bodies(home, q) == ["mermaid-flow"], q


# -- only delivered evidence is a hit (what dead proposes) -------------------------------------


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
        got = mem.recall("what should I name this variable", automatic=True)
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
        mem.recall(q, automatic=True)  # the hooks' recalls: asked, it is a weak match
    assert mem.usage()["fact:I use vim for editing"].hits == 0
    assert [s.text for s in mem.dead()] == ["I use vim for editing"]


# -- why_not names the floor's cut -------------------------------------------------------------


def test_the_hook_stays_quiet_where_an_ask_gets_weak_matches(tmp_path: Path) -> None:
    """The query gate rules automatic injection only (design §6.1 rule 5): the hook route
    passes ``automatic`` to the recall, so a prompt the home holds no evidence for adds
    nothing to the agent's prompt, while the same words asked get the rows sharing a word."""
    home = home_of(tmp_path, PERSON)
    prompt = "deployment of kubernetes helm charts"
    with Memory(home) as mem:
        assert [r.text for r in mem.recall(prompt).picked] == [
            "We deploy the shop on Tuesdays after the standup",
            "The deploy runs at 2am",
        ]
    r = Responder(str(home))
    try:
        event = {"hook_event_name": "UserPromptSubmit", "prompt": prompt}
        assert r.answer("claude-code", event) == ""
        event = {"hook_event_name": "UserPromptSubmit", "prompt": "when does the deploy run"}
        assert "The deploy runs at 2am" in r.answer("claude-code", event)
    finally:
        r.close()


def test_why_not_names_what_the_floor_cut(tmp_path: Path) -> None:
    """'deployment time' recalled nothing and why_not named nothing: the floor was no reason
    it knew; and it listed a fact sharing no word as beyond-k. (Since the background prior
    'deployment time' finds both deploy facts; a query sharing one word of four is cut.)
    The query gate rules automatic injection only (design §6.1 rule 5): the hooks stay quiet,
    an asked recall delivers both deploy facts as weak matches, and why-not, which explains
    the asked recall, names nothing; the gate says where it stands."""
    home = home_of(tmp_path, PERSON + facts("My cat Miso needs her medicine every morning"))
    mem = Memory(home, model="evidence")
    query = "deployment of kubernetes helm charts"
    assert mem.recall(query, automatic=True).picked == []
    got = mem.recall(query)
    assert (got.weak, [r.text for r in got.picked]) == (
        True,
        ["We deploy the shop on Tuesdays after the standup", "The deploy runs at 2am"],
    )
    assert got.text.startswith("# Recalled memory (weak matches only: ")
    assert mem.why_not(query) == []
    gate = mem.gate(query)
    assert gate is not None
    assert (round(gate.best, 3), gate.evidence) == (0.416, False)
    assert gate.best < R.FLOOR


# -- a long prompt, as agents send it ----------------------------------------------------------

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


# -- a query of stop words only ----------------------------------------------------------------


def test_a_query_of_chinese_stop_words_only_is_no_evidence(tmp_path: Path) -> None:
    """ "我们的" ("our") gave the bigram 们的, two stop characters but no stop word, and
    delivered every fact holding it. Held since a bigram of two stop characters is dropped
    (analyzer._of_stops)."""
    home = home_of(tmp_path, facts("我们的项目在北京", "他们的猫叫米索", "部署区域是 eu-west-1"))
    assert block_rows(home, "部署区域") == ["- [fact] 部署区域是 eu-west-1"]
    got = {q: block_rows(home, q) for q in ("我们的", "你们的", "他们的")}
    assert got == {"我们的": [], "你们的": [], "他们的": []}


def test_a_query_of_english_stop_words_only_is_no_evidence(tmp_path: Path) -> None:
    """The English control: stop words only, in capitals, fullwidth (NFKC), contractions."""
    home = home_of(
        tmp_path, facts("The the of and is a stop word list", "Deploy region is eu-west-1")
    )
    for q in ("the of and", "THE OF AND", "ＴＨＥ ＯＦ", "it's", "don't", "you're", "the\u00adof"):
        assert block_rows(home, q) == [], q


# -- the analyzer on words a person writes -----------------------------------------------------


#: Two facts every home below holds beside the one under attack (a person's small home).
BASE = facts("The billing service deploys on fridays", "I use vim for editing")


def test_a_dotted_capital_i_keeps_its_word(tmp_path: Path) -> None:
    """design §4.1 (NFKC folding, lower case): 'İstanbul' analyzed to 'stanbul', as str.lower()
    gives i + U+0307 and the word was split at the combining dot, so neither spelling found
    the other. Marks left standing are dropped before words are split (analyzer.folded)."""
    dotted = home_of(tmp_path, facts("Our second office is in İstanbul") + BASE, name="dotted")
    plain = home_of(tmp_path, facts("Our second office is in Istanbul") + BASE, name="plain")
    assert texts(dotted, "istanbul") == ["Our second office is in İstanbul"]
    assert texts(plain, "İstanbul") == ["Our second office is in Istanbul"]


def test_a_language_named_with_signs_is_no_term(tmp_path: Path) -> None:
    """'c++', 'C#' and 'F#' analyze to no term: one letter, its signs dropped. Decided: a term
    is a word of letters or digits (design §4.1, as standard analyzers do), so the one-word
    queries 'c++' and 'c#' recall nothing, as any query of no term."""
    home = home_of(
        tmp_path, facts("The engine is written in C++", "The build tools are in C#") + BASE
    )
    assert texts(home, "c++") == []
    assert texts(home, "C#") == []


def test_a_hyphenated_word_is_found_as_written_not_by_its_closed_spelling(
    tmp_path: Path,
) -> None:
    """A hyphen splits a word into two terms: 'Wi-Fi' is wi + fi, 'e-mail' mail. Decided: words
    are split at a hyphen (design §4.1, as standard analyzers do), so 'wifi' and 'email' are
    other terms; the spelling of the fact finds it."""
    home = home_of(
        tmp_path,
        facts("The Wi-Fi password is on the fridge", "Send invoices by e-mail") + BASE,
    )
    assert texts(home, "wifi") == []
    assert texts(home, "email") == []
    assert texts(home, "wi-fi") == ["The Wi-Fi password is on the fridge"]
    assert texts(home, "e-mail") == ["Send invoices by e-mail"]


def test_sharp_s_is_lower_cased_not_folded_to_ss(tmp_path: Path) -> None:
    """'Hauptstraße' stays straße and 'hauptstrasse' is hauptstrass. Decided: the analyzer
    lower-cases after NFKC folding (design §4.1) and does not case-fold ß to ss."""
    home = home_of(tmp_path, facts("Our office is on Hauptstraße 5") + BASE)
    assert texts(home, "hauptstrasse") == []
    assert texts(home, "Hauptstraße") == ["Our office is on Hauptstraße 5"]
