"""The skill scorer: metadata-driven ranking, NOT-for demotion, offerability, determinism."""

from __future__ import annotations

import random

import pytest

from flowpilot.skills.scorer import ScoredSkill, SkillDoc, SkillIndex, tokenize

SKILLS = [
    SkillDoc(
        "send_email",
        "Send an email to a customer. Use when: the user asks to email, notify or follow up "
        "with someone by email. NOT for: internal notes or reminders.",
        trust_level="approve",
    ),
    SkillDoc(
        "memory_write",
        "Remember a note, fact or lesson in the agent's memory. Use when: something should be "
        "remembered for later, such as an internal note, a preference or a decision. "
        "NOT for: messages to customers.",
    ),
    SkillDoc(
        "memory_search",
        "Search the agent's memory for notes, facts and lessons. Use when: recalling what is "
        "known about a topic, a customer or a past decision. NOT for: searching the web.",
    ),
    SkillDoc(
        "objective_create",
        "Create a new objective with success criteria and KPIs. Use when: the user sets a "
        "goal or target for the business to work toward. NOT for: one-off tasks.",
    ),
    SkillDoc(
        "objective_update",
        "Update an objective's progress, status or priority. Use when: a goal is achieved or "
        "done, blocked, reprioritised or its KPIs change. NOT for: brand-new targets.",
    ),
    SkillDoc(
        "get_briefing",
        "Summarize the state of the business: objectives, pending approvals, recent events "
        "and signals. Use when: the user asks for a briefing, status overview or what "
        "happened today. NOT for: details of one customer.",
    ),
    SkillDoc(
        "create_signal",
        "Record an incoming business signal for asynchronous planning. Use when: a lead, "
        "complaint, order or alert arrives that needs a plan. NOT for: notes to self.",
    ),
    SkillDoc(
        "http_request",
        "Call an external HTTP API. Use when: data must be fetched from or posted to a web "
        "service or URL. NOT for: sending email.",
        trust_level="notify",
    ),
    SkillDoc(
        "reflect",
        "Critique the outcome of a completed action and record a lesson. Use when: after a "
        "write action, to assess what went well and what to improve. NOT for: planning.",
    ),
    SkillDoc(
        "schedule_meeting",
        "Book a meeting in the calendar and invite attendees. Use when: the user wants to "
        "schedule a call, demo or appointment. NOT for: reminders without attendees.",
    ),
    SkillDoc(
        "create_invoice",
        "Create and issue an invoice to a customer. Use when: billing a customer for work, "
        "products or services. NOT for: refunds.",
        trust_level="approve",
    ),
    SkillDoc(
        "issue_refund",
        "Refund a customer's payment, fully or partly. Use when: a customer is owed money "
        "back for a cancelled order or a complaint. NOT for: new invoices.",
        trust_level="approve",
    ),
    SkillDoc(
        "web_search",
        "Search the public web for information. Use when: researching competitors, prices, "
        "news or facts that are not in memory. NOT for: internal records.",
    ),
    SkillDoc(
        "query_sales",
        "Report sales figures and revenue from orders. Use when: the user asks about revenue, "
        "sales totals, top products or trends over a period. NOT for: invoices.",
    ),
    SkillDoc(
        "set_reminder",
        "Set a reminder for the operator at a given time. Use when: something must be done "
        "later and someone should be reminded. NOT for: emails to customers.",
    ),
]


@pytest.fixture(scope="module")
def index() -> SkillIndex:
    return SkillIndex(SKILLS)


def top(index: SkillIndex, intent: str) -> str:
    ranked = index.rank(intent)
    assert ranked, intent
    return ranked[0].name


def test_tokenize_stems_splits_and_drops_stopwords() -> None:
    assert tokenize("Sending the emails about Objectives") == ["send", "email", "objective"]
    assert tokenize("send_email getBriefing") == ["send", "email", "get", "brief"]
    assert tokenize("status analysis business addresses") == [
        "status",
        "analysis",
        "business",
        "address",
    ]
    assert tokenize("planning billing adding") == ["plan", "bill", "add"]
    assert tokenize("the and of to a") == []


@pytest.mark.parametrize(
    ("intent", "expected"),
    [
        ("email the customer to follow up on their quote", "send_email"),
        ("remember that Acme prefers morning deliveries", "memory_write"),
        ("what do we know about Acme's past decisions?", "memory_search"),
        ("set a goal to reach 50 new customers this quarter", "objective_create"),
        ("we achieved the revenue goal, mark it done", "objective_update"),
        ("give me a briefing of what happened today", "get_briefing"),
        ("a new complaint arrived from a lead", "create_signal"),
        ("fetch the data from this URL", "http_request"),
        ("assess how the last action went and what to improve", "reflect"),
        ("book a demo call with the prospect on Tuesday", "schedule_meeting"),
        ("bill the customer for last week's work", "create_invoice"),
        ("the customer should get their money back for the cancelled order", "issue_refund"),
        ("research competitor prices online", "web_search"),
        ("how much revenue did we make last month?", "query_sales"),
        ("remind me later to call the supplier", "set_reminder"),
    ],
)
def test_natural_intents_rank_the_right_skill_first(
    index: SkillIndex, intent: str, expected: str
) -> None:
    assert top(index, intent) == expected


def test_overlapping_intent_keeps_the_right_skill_in_the_shortlist(index: SkillIndex) -> None:
    # Lexical overlap ("invoices") can outscore the intent; the model chooses from the top K.
    shortlist = [s.name for s in index.rank("remember that Acme prefers invoices on Fridays")]
    assert "memory_write" in shortlist[:3]


def test_not_for_match_demotes(index: SkillIndex) -> None:
    ranked = [s.name for s in index.rank("write an internal note")]
    assert ranked[0] == "memory_write"
    assert "send_email" not in ranked[:1]
    # Two skills equal except for a NOT-for that names the intent.
    twins = SkillIndex(
        [
            SkillDoc("alpha_tool", "Export a report. Use when: exporting reports."),
            SkillDoc(
                "beta_tool",
                "Export a report. Use when: exporting reports. NOT for: monthly payroll",
            ),
        ]
    )
    plain = twins.rank("export the report")
    assert plain[0].score == plain[1].score
    demoted = twins.rank("export the monthly payroll report")
    assert [s.name for s in demoted] == ["alpha_tool", "beta_tool"]
    assert demoted[1].score < demoted[0].score
    assert demoted[1].matched["not_for"] == ["monthly", "payroll"]


@pytest.mark.parametrize(
    "hidden",
    [
        SkillDoc("wipe_database", "Wipe the database. Use when: wipe the database.", False),
        SkillDoc(
            "wipe_database",
            "Wipe the database. Use when: wipe the database.",
            trust_level="blocked",
        ),
        SkillDoc(
            "wipe_database",
            "Wipe the database. Use when: wipe the database.",
            module_enabled=False,
        ),
    ],
)
def test_unofferable_skills_never_appear(hidden: SkillDoc) -> None:
    index = SkillIndex([*SKILLS, hidden])
    assert len(index) == len(SKILLS)
    assert "wipe_database" not in index
    assert all(s.name != "wipe_database" for s in index.rank("wipe the database", k=100))


def test_from_row_reads_registry_rows() -> None:
    row = {"name": "x_tool", "description": None, "enabled": True, "trust_level": "blocked"}
    doc = SkillDoc.from_row(row)
    assert doc == SkillDoc("x_tool", "", True, "blocked", True)
    assert SkillDoc.from_row({**row, "trust_level": "auto", "module_enabled": False}) == (
        SkillDoc("x_tool", "", True, "auto", False)
    )
    assert len(SkillIndex([doc])) == 0


def test_recent_successes_break_near_ties_but_never_lift_irrelevant_skills() -> None:
    index = SkillIndex(
        [
            SkillDoc("crm_lookup", "Look up a contact. Use when: finding contact details."),
            SkillDoc("crm_lookup_v2", "Look up a contact. Use when: finding a contact's details."),
            SkillDoc("set_reminder", SKILLS[-1].description),
        ]
    )
    intent = "find the contact details for Bob"
    without = index.rank(intent)
    assert without[0].name == "crm_lookup"
    assert "set_reminder" not in {s.name for s in without}
    history = {"crm_lookup_v2": 3, "set_reminder": 1000}
    with_history = index.rank(intent, recent_successes=history)
    assert with_history[0].name == "crm_lookup_v2"
    assert "set_reminder" not in {s.name for s in with_history}


def test_same_input_same_output_regardless_of_order(index: SkillIndex) -> None:
    intents = ["email the customer about the refund", "note this for later", "weekly sales"]
    expected = [index.rank(i, k=15) for i in intents]
    for seed in range(5):
        shuffled = SKILLS[:]
        random.Random(seed).shuffle(shuffled)
        assert [SkillIndex(shuffled).rank(i, k=15) for i in intents] == expected


def test_ties_break_by_name() -> None:
    docs = [SkillDoc(name, "Export a report. Use when: exporting.") for name in ("b_x", "a_x")]
    assert [s.name for s in SkillIndex(docs).rank("export")] == ["a_x", "b_x"]


def test_matched_names_the_fields(index: SkillIndex) -> None:
    best = index.rank("send an email to the customer")[0]
    assert isinstance(best, ScoredSkill)
    assert best.name == "send_email"
    assert best.matched["name"] == ["send", "email"]
    assert best.matched["summary"] == ["send", "email", "customer"]
    assert best.matched["use_when"] == ["email"]
    assert "not_for" not in best.matched


def test_k_is_respected_and_scores_are_positive_and_sorted(index: SkillIndex) -> None:
    intent = "customer email note memory search goal objective invoice refund sales web"
    ranked = index.rank(intent, k=3)
    assert len(ranked) == 3
    assert len(index.rank(intent, k=20)) > 3
    assert index.rank(intent, k=0) == []
    scores = [s.score for s in index.rank(intent, k=20)]
    assert scores == sorted(scores, reverse=True)
    assert all(s > 0 for s in scores)


@pytest.mark.parametrize("intent", ["", "   ", "the and of to a", "?!", "zyxwv qqq"])
def test_empty_stopword_or_unknown_intent_ranks_nothing(index: SkillIndex, intent: str) -> None:
    assert index.rank(intent) == []


def test_duplicate_names_are_rejected() -> None:
    with pytest.raises(ValueError, match="send_email"):
        SkillIndex([SKILLS[0], SKILLS[0]])


def test_top_k_is_a_prefix_of_the_full_ranking() -> None:
    # A small vocabulary makes many ties at the k-th score, where the cut-off must stay exact.
    rng = random.Random(3)
    vocab = [f"w{i}" for i in range(30)]
    skills = [
        SkillDoc(
            f"skill_{i:03d}",
            f"{' '.join(rng.choices(vocab, k=5))}. Use when: {' '.join(rng.choices(vocab, k=8))}"
            f". NOT for: {' '.join(rng.choices(vocab, k=2))}",
        )
        for i in range(300)
    ]
    index = SkillIndex(skills)
    history = {f"skill_{i:03d}": i % 5 for i in range(0, 300, 7)}
    for _ in range(200):
        intent = " ".join(rng.choices(vocab, k=rng.randint(1, 8)))
        everything = index.rank(intent, k=len(skills), recent_successes=history)
        for k in (1, 3, 8):
            assert index.rank(intent, k=k, recent_successes=history) == everything[:k]
