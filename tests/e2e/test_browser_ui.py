"""The browser UI in a real Chromium (Debian's, driven by Playwright) against `lemmata serve` on
the fake model and search servers: a run started from the page, its gates approved in the Live
tab (its lemma graph drawn while a lemma is proved and at the theory review), its paper read, a question answered as a stream, a rewrite made while a second one is
refused with a toast, the token limits saved in the Settings tab. The page is opened as
`lemmata serve` prints it, with its API token in the URL; without it, the page asks for it. Screenshots of each step go to test-artifacts/browser/."""

from __future__ import annotations

import os
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin

import httpx
import pytest
from conftest import TEST_API_TOKEN, cli_environment

from lemmata.llm.calllog import read_call_records
from lemmata.run.record import load_record
from lemmata.verification.calibrate import bundled_proofs
from support import REPO, even_sum_session
from support.fake_llm_server import FakeLLMServer, prompt_text
from support.served import lemmata_serve

pytestmark = [pytest.mark.browser, pytest.mark.long]

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

CHROMIUM = Path("/usr/bin/chromium")  # Debian's package; `playwright install` is never run
ARTIFACTS = REPO / "test-artifacts" / "browser"
QUESTION = "Why is the sum of two even integers even?"
ANSWER = "Write $a = 2m$ and $b = 2n$; then $a + b = 2(m + n)$ by distributivity, an even integer."
FORMULAS = ["$a = 2m$", "$b = 2n$", "$a + b = 2(m + n)$"]  # typeset by KaTeX once the answer is kept
INSTRUCTIONS = "Stress the parity argument and name the ideal 2Z explicitly"
RUN_MS = 180_000  # a workflow stage, or a rewrite through Snakemake and pdflatex, on 2 slow cores
# Answers the UI expects and handles (a token asked for, a 400 shown beside its form, a 409 as a
# toast); the browser logs each as a failed resource load.
#: What a test's own requests (not the page's) send: the token of the servers tests start.
AUTHORIZED = {"Authorization": f"Bearer {TEST_API_TOKEN}"}
HANDLED_REFUSALS = re.compile(r"^Failed to load resource: the server responded with a status of (400|401|409) ")

if not CHROMIUM.exists():
    missing = f"{CHROMIUM} is missing: apt-get install --no-install-recommends chromium (bin/setup does)"
    if os.environ.get("LEMMATA_REQUIRE_BROWSER") == "1":  # bin/test: setup installed it, so this is a failure
        pytest.fail(missing, pytrace=False)
    pytest.skip(missing, allow_module_level=True)


@pytest.fixture(scope="module")
def services(services):
    """The shared fake services, with the Q&A answer streamed in pieces 0.4 s apart, so the
    browser gets them one by one."""
    llm, search = services
    llm.set_default("qa", ANSWER)
    llm.stream_intervals["qa"] = 0.4
    return llm, search


@pytest.fixture(scope="module")
def environment(services, tmp_path_factory) -> dict[str, str]:
    """The server's environment: a data directory with a price for the fake model ($2 in, $8 out
    per million tokens), the fake model and search servers."""
    llm, search = services
    home = tmp_path_factory.mktemp("browser") / "home"
    home.mkdir()
    (home / "prices.yaml").write_text("models:\n  local-model: {input: 2.0, output: 8.0}\n")
    return cli_environment(
        home, LLM_BACKEND="local", LOCAL_LLM_BASE_URL=llm.openai_base_url, **search.settings_values()
    )


@pytest.fixture(scope="module")
def server(environment) -> Iterator[str]:
    """The base URL of `lemmata serve` with the environment's token (TEST_API_TOKEN)."""
    with lemmata_serve(environment, Path(environment["LEMMATA_HOME"]).parent) as served:
        yield served.base_url


def opened(base: str, view: str = "") -> str:
    """The page's URL as `lemmata serve` prints it (?token=), with a view (#tab=...)."""
    return f"{base}/?token={TEST_API_TOKEN}{view}"


@pytest.fixture(scope="module")
def browser():
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir(parents=True)
    playwright = sync_api.sync_playwright().start()
    chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--disable-gpu"])
    expect.set_options(timeout=20_000)
    try:
        yield chromium
    finally:
        chromium.close()
        playwright.stop()


@pytest.fixture
def page(browser):
    """A fresh page, tall enough that the Paper tab needs no scrolling (a click right after a
    scroll can land on the PDF viewer's frame); it must log no errors but HANDLED_REFUSALS."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
    yield page
    context.close()
    assert [e for e in errors if not HANDLED_REFUSALS.match(e)] == []


def screenshot(page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def approve_gate(page, gate: str, shot: str) -> None:
    """Wait for the Live tab to show `gate`, screenshot it, approve it."""
    expect(page.locator(f"#gate[data-gate='{gate}']")).to_be_visible(timeout=RUN_MS)
    screenshot(page, shot)
    page.get_by_role("button", name="Approve").click()
    expect(page.locator(f"#gate[data-gate='{gate}']")).to_be_hidden()


def statuses_of(svg: str) -> dict[str, str]:
    """Each lemma's status in a lemma graph's SVG."""
    return dict(re.findall(r'data-lemma="(\w+)" data-status="([^"]+)"', svg))


def hold_the_first_proof_of(lemma_id: str, released: threading.Event):
    """A fake-model hook: the first prover call for `lemma_id` waits until `released` (60 s at
    most), so the page can be seen while that lemma's job runs."""
    held: list[str] = []

    def hold(request) -> None:
        asked = request.body["messages"][-1]["content"]
        if request.role == "prover" and f"Lemma to prove now [{lemma_id}]" in asked and not held:
            held.append(lemma_id)
            released.wait(60)

    return hold


def test_a_run_started_in_the_browser_is_reviewed_read_questioned_and_rewritten(page, server, environment, services):
    # (a) The page takes the token from its URL and removes it from the address bar. A new run
    # from the page (the gate mode is the GATE_MODE setting unless chosen: human here); the hash
    # names it and the tab.
    page.goto(opened(server))
    expect(page).to_have_url(f"{server}/")
    page.get_by_role("button", name="New run").click()
    page.get_by_label("Task").fill(even_sum_session.TASK)
    page.get_by_label("Domain (optional)").fill("parity")
    expect(page.get_by_label("Gate mode")).to_have_value("")
    page.get_by_label("Gate mode").select_option("human")
    page.get_by_label("Budget in USD (optional)").fill("100")
    page.get_by_role("button", name="Start run").click()
    expect(page).to_have_url(re.compile(r"#run=[\w-]+&tab=live$"))
    run_id = re.search(r"run=([\w-]+)", page.url).group(1)
    expect(page.get_by_test_id("run-select")).to_have_value(run_id)
    config = (Path(environment["LEMMATA_HOME"]) / "runs" / run_id / "config.yaml").read_text(encoding="utf-8")
    assert "domain: parity" in config
    assert load_record(Path(environment["LEMMATA_HOME"]) / "runs" / run_id).budget_usd == 100

    # (b) Every review of a human-gated run, in order; the theory review shows the lemma chain.
    approve_gate(page, "survey_review", "01-live-survey-gate")
    # The lemma graph while the theory stage runs (issue 26): L4's first proof is held until the
    # Live tab has drawn it running.
    llm, _ = services
    released = threading.Event()
    llm.before_answer = hold_the_first_proof_of("L4", released)
    try:
        approve_gate(page, "direction_review", "02-live-direction-gate")
        graph = page.get_by_test_id("lemma-graph-box").locator("svg")
        expect(graph.locator("g.lemma[data-lemma='L4']")).to_have_attribute("data-status", "running", timeout=RUN_MS)
        expect(graph.locator("g.lemma")).to_have_count(len(even_sum_session.LEMMAS))
        expect(graph.locator("g.lemma[data-lemma='L1']")).not_to_have_attribute("data-status", "pending")
        # What the calls cost, the theory's forecast beside what it used so far, the budget (issue 26).
        expect(page.get_by_test_id("tokens")).to_contain_text(re.compile(r" · cost \$\d+\.\d{4}$"))
        expect(page.get_by_test_id("spending")).to_have_text(
            re.compile(
                r"^theory: forecast \d+ calls?, [\d,]+ tokens, \$[\d.]+; used \d+ calls?, .* · budget \$100\.00$"
            )
        )
        expect(page.locator("#stage-track .stage[data-state='running']")).to_have_attribute(
            "title", re.compile(r"theory\.json\nforecast \d+ calls?.*\(from .*\)$", re.S)
        )
        screenshot(page, "02b-live-lemma-graph-running")
    finally:
        released.set()
        llm.before_answer = None
    expect(page.locator("#gate[data-gate='theory_review']")).to_be_visible(timeout=RUN_MS)
    # At the theory review the picture is in the gate, as the run directory keeps it: each lemma
    # with its proof's status, an arrow per dependency, turns and cost in each lemma's title.
    run_dir = Path(environment["LEMMATA_HOME"]) / "runs" / run_id
    on_disk = statuses_of((run_dir / "theory/lemma_graph.svg").read_text(encoding="utf-8"))
    assert set(on_disk) == {lemma["id"] for lemma in even_sum_session.LEMMAS}
    graph = page.locator("#gate").get_by_test_id("lemma-graph").locator("svg")
    for lemma_id, status in on_disk.items():
        expect(graph.locator(f"g.lemma[data-lemma='{lemma_id}']")).to_have_attribute("data-status", status)
    expect(graph.locator("g.edge")).to_have_count(sum(len(lemma["depends_on"]) for lemma in even_sum_session.LEMMAS))
    expect(graph.locator("g.lemma[data-lemma='L4'] > title")).to_contain_text(
        re.compile(r"L4: \w[\w ]*\s+prover turns: \d+; model calls: \d+; cost: ")
    )
    expect(page.get_by_test_id("lemma-graph-box")).to_be_hidden()
    # Issue 36: the chain typeset (KaTeX), one numbering (L1, not "L1 [L1]"), its text one click away.
    chain = page.get_by_test_id("gate-lemmas")
    for lemma in even_sum_session.LEMMAS:
        expect(chain.locator(f"li[data-lemma='{lemma['id']}'] > strong")).to_have_text(lemma["id"])
        expect(page.get_by_test_id("gate-card")).to_contain_text(
            re.compile(rf"\b{lemma['id']} (verified|low confidence)")
        )
    formula = chain.locator("li[data-lemma='L1'] .statement .math").first
    expect(formula.locator(".katex")).to_have_count(1)
    expect(formula).to_have_attribute("data-source", "$n$")
    formula.click()
    expect(formula.locator("code")).to_have_text("$n$")
    formula.click()
    expect(formula.locator(".katex")).to_have_count(1)
    expect(page.locator("#gate-card-box")).not_to_have_attribute("open", "")
    # The sketch of the argument above the chain, typeset (issue 36).
    sketch = page.locator("#gate-head p", has_text="Sketch (the model's summary of the argument")
    expect(sketch.locator(".katex")).to_have_count(3)
    expect(page.get_by_test_id("gate-card")).to_contain_text(re.compile(r"^Main result: (established|NOT established)"))
    expect(page.get_by_test_id("gate-card")).to_contain_text("Checked by: ")
    # Issue 34: the formal statements beside the prose, so the researcher can judge the match.
    expect(page.get_by_test_id("gate-card")).to_contain_text("Goal, formally: ∀ a, b ∈ ℤ")
    expect(page.get_by_test_id("gate-card")).to_contain_text("formally: ∀ m, n ∈ ℤ: 2·m + 2·n = 2·(m + n)")
    expect(page.get_by_test_id("gate-card")).to_contain_text("machine checks: machine-checked by")
    expect(page.get_by_label("Most problematic step (lemma number or id)")).to_be_visible()
    expect(page.locator("#stage-track .stage[data-state='waiting']")).to_have_count(1)
    approve_gate(page, "theory_review", "03-live-theory-gate")
    approve_gate(page, "experiment_review", "04-live-experiment-gate")

    # (c) The run completes: every stage done, the event log has the workflow's jobs. The badge
    # shows the outcome: whether the main result is established, as the status poll says it.
    expect(page.get_by_test_id("run-status")).to_have_text(re.compile(r"^completed"), timeout=RUN_MS)
    outcome = page.request.get(urljoin(page.url, f"/api/runs/{run_id}"), headers=AUTHORIZED).json()["outcome"]
    expect(page.get_by_test_id("run-status")).to_have_text(outcome)
    expect(page.get_by_test_id("run-select").locator(f"option[value='{run_id}']")).to_contain_text(outcome)
    expect(page.locator("#stage-track .stage")).not_to_have_count(0)
    expect(page.locator("#stage-track .stage:not([data-state='done'])")).to_have_count(0)
    expect(page.get_by_test_id("event-log")).to_contain_text(re.compile(r"job \d+ started: prove_lemma L1"))
    expect(page.get_by_test_id("event-log")).to_contain_text(re.compile(r"progress \d+/\d+"))
    expect(page.get_by_test_id("cards")).to_contain_text("theory")
    # The token line's cost is the calls' tokens times the prices of the data directory's prices.yaml.
    calls = list(read_call_records(run_dir / "llm_calls.jsonl"))
    for call in calls:
        assert call["cost_usd"] == pytest.approx((call["tokens_in"] * 2.0 + call["tokens_out"] * 8.0) / 1e6, abs=1e-6)
    total = sum(call["cost_usd"] for call in calls)
    expect(page.get_by_test_id("tokens")).to_have_text(
        re.compile(rf"^{len(calls)} model calls · .* · cost \${total:.4f}$")
    )
    expect(page.get_by_test_id("lemma-graph-box").locator("svg g.lemma")).to_have_count(len(on_disk))
    expect(page.locator("#gate").get_by_test_id("lemma-graph")).to_have_count(0)  # back in its own box
    screenshot(page, "05-live-completed")
    page.get_by_test_id("lemma-graph-box").screenshot(path=str(ARTIFACTS / "05b-live-lemma-graph.png"))

    # The paper: the PDF the frame shows is served as a PDF, the LaTeX view shows the source.
    # A frame cannot send the token: the page fetches the PDF with it and shows a blob: copy.
    page.get_by_role("tab", name="Paper").click()
    expect(page).to_have_url(re.compile(rf"#run={run_id}&tab=paper$"))
    frame = page.get_by_test_id("pdf-frame")
    expect(frame).to_have_attribute("data-src", f"/api/runs/{run_id}/versions/1/paper.pdf")
    expect(frame).to_have_attribute("src", re.compile(r"^blob:"))
    pdf = page.request.get(urljoin(page.url, frame.get_attribute("data-src")), headers=AUTHORIZED)
    assert pdf.status == 200 and pdf.headers["content-type"] == "application/pdf"
    assert pdf.body().startswith(b"%PDF")
    expect(page.get_by_role("link", name="Open PDF")).to_have_attribute("href", frame.get_attribute("src"))
    page.get_by_role("button", name="LaTeX").click()
    expect(page.get_by_test_id("tex-source")).to_contain_text("\\documentclass")
    expect(frame).to_be_hidden()
    screenshot(page, "06-paper-latex")
    page.get_by_role("button", name="PDF").click()
    expect(frame).to_have_attribute("data-loaded", f"/api/runs/{run_id}/versions/1/paper.pdf")

    # (d) A question: the answer fills the pending bubble piece by piece, then is kept.
    page.evaluate("""() => {
        window.seenPieces = [];
        new MutationObserver(() => {
            const text = document.querySelector("[data-testid=pending-answer] .msg-text")?.textContent;
            if (text && window.seenPieces.at(-1) !== text) window.seenPieces.push(text);
        }).observe(document.getElementById("chat"), {subtree: true, childList: true, characterData: true});
    }""")
    page.get_by_label("Question or revision instructions").fill(QUESTION)
    page.get_by_role("button", name="Ask").click()
    expect(page.get_by_test_id("pending-answer")).to_contain_text(re.compile(r"\S"))
    screenshot(page, "07-paper-pdf-and-answer-streaming")
    expect(page.get_by_test_id("pending-answer")).to_have_count(0)
    answer = page.get_by_test_id("chat").locator(".msg-assistant").last
    expect(answer).to_contain_text("by distributivity, an even integer.")
    expect(answer.locator(".math")).to_have_count(len(FORMULAS))  # its mathematics typeset
    pieces = page.evaluate("window.seenPieces")
    assert len(pieces) >= 2 and all(ANSWER.startswith(p) for p in pieces) and len(pieces[0]) < len(ANSWER), pieces
    page.reload()
    expect(page.get_by_test_id("chat").locator(".msg-user")).to_have_text(re.compile(re.escape(QUESTION)))
    kept = page.get_by_test_id("chat").locator(".msg-assistant").last
    for number, source in enumerate(FORMULAS):
        expect(kept.locator(".math").nth(number)).to_have_attribute("data-source", source)
    expect(kept.locator(".katex")).to_have_count(len(FORMULAS))
    screenshot(page, "08-paper-answer-kept")

    # (e, f) Instructions typed in the chat start a rewrite (the spec's Paper rewrite rule 1); a
    # second request while it works is refused with a toast.
    page.get_by_label("Question or revision instructions").fill(INSTRUCTIONS)
    page.get_by_role("button", name="Ask").click()
    expect(page.get_by_test_id("rewrite-status")).to_have_text(
        "your message reads as revision instructions: rewrite to version 2 started"
    )
    expect(page.get_by_test_id("pending-answer")).to_have_count(0)
    page.get_by_label("Instructions for the next version").fill("Shorten the introduction")
    page.get_by_role("button", name="Request rewrite").click()
    toast = page.locator(".toast[role='status']")
    expect(toast).to_contain_text("in progress")
    screenshot(page, "09-paper-rewrite-refused-toast")
    page.get_by_role("tab", name="Live").click()  # the Live tab follows the rewrite's steps
    expect(page.get_by_test_id("rewrite-progress")).to_contain_text(f"Rewrite to version 2: {INSTRUCTIONS}")
    expect(page.locator("#rewrite-track .stage")).to_have_count(4)
    screenshot(page, "09b-live-rewrite-steps")
    page.get_by_role("tab", name="Paper").click()
    expect(page.get_by_test_id("rewrite-status")).to_have_text("version 2 is ready", timeout=RUN_MS)
    expect(page.get_by_test_id("version-select")).to_have_value("2")
    expect(page.get_by_test_id("version-select").locator("option")).to_have_count(2)
    expect(frame).to_have_attribute("data-src", f"/api/runs/{run_id}/versions/2/paper.pdf")
    expect(page.get_by_test_id("chat")).to_contain_text(f"rewrite requested: {INSTRUCTIONS}")
    expect(page.get_by_test_id("chat")).to_contain_text("rewrite saved")
    assert page.request.get(urljoin(page.url, frame.get_attribute("data-src")), headers=AUTHORIZED).status == 200
    expect(frame).to_have_attribute("data-loaded", f"/api/runs/{run_id}/versions/2/paper.pdf")
    screenshot(page, "10-paper-version-2")
    assert set(statuses_of((run_dir / "versions/v2/lemma_graph.svg").read_text(encoding="utf-8")))  # the rewrite's


def test_a_token_limit_saved_in_the_settings_tab_is_kept_and_a_bad_one_is_refused(page, server):
    page.goto(opened(server, "#tab=settings"))
    expect(page).to_have_url(f"{server}/#tab=settings")
    prover = page.get_by_label("MAX_TOKENS_PROVER")
    expect(prover).to_have_attribute("type", "number")
    expect(page.locator(".setting")).to_have_count(12)
    expect(page.locator("[data-field='prover'] .help")).to_contain_text("source: ")
    prover.fill("5000")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_test_id("settings-status")).to_have_text("saved: the next run uses these")
    page.reload()
    expect(prover).to_have_value("5000")
    expect(page.locator("[data-field='prover'] .source")).to_have_text("source: saved")
    screenshot(page, "11-settings-saved")

    prover.fill("0")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_test_id("settings-error")).to_contain_text("prover")
    expect(page.get_by_test_id("settings-status")).to_have_text("")
    screenshot(page, "12-settings-refused")
    page.reload()
    expect(prover).to_have_value("5000")


def test_the_settings_tab_shows_each_checking_models_trust_and_calibrates_one(page, environment, tmp_path):
    """A data directory of its own and a fake judge of its own: the calibration must not touch
    the module's run (its model's trust, its scripted answers)."""
    proofs, _ = bundled_proofs()
    correct = {proof.proof.strip()[:300]: proof.label == "correct" for proof in proofs}

    def discerning(request) -> str:
        text = prompt_text(request.body)
        right = next(label for head, label in correct.items() if head in text)
        if request.role == "verifier":
            return (
                '{"verdict": "valid", "issues": []}' if right else '{"verdict": "invalid", "issues": ["Step 2 fails."]}'
            )
        return (
            '{"error_found": false, "first_error": ""}' if right else '{"error_found": true, "first_error": "Step 2."}'
        )

    home = tmp_path / "home"
    with FakeLLMServer(models=["judge-model"], latency=0.02) as judge:
        judge.set_default(None, discerning)
        env = {
            **cli_environment(home, LLM_BACKEND="local", LOCAL_LLM_BASE_URL=judge.openai_base_url),
            "LOCAL_LLM_MODEL": "judge-model",
        }
        with lemmata_serve(env, tmp_path) as served:
            page.goto(opened(served.base_url, "#tab=settings"))
            # No embedded model in this data directory: its row says so, the others are still shown.
            expect(page.get_by_test_id("trust-embedded")).to_have_text("not available here")
            expect(page.get_by_test_id("trust-local")).to_have_text("not measured")
            row = page.locator(".checking-model[data-backend='local']")
            expect(row).to_contain_text("lemmata calibrate --backend local --model judge-model")
            expect(page.locator(".checking-model[data-backend='vendora'] button")).to_be_disabled()  # no key here
            screenshot(page, "13-checking-models")
            page.once("dialog", lambda dialog: dialog.accept())
            row.get_by_role("button", name="Calibrate").click()
            expect(row.get_by_role("button")).to_have_text("Calibrating…")
            expect(page.get_by_test_id("trust-local")).to_have_text("calibrated", timeout=RUN_MS)
            expect(row.get_by_role("button")).to_have_text("Calibrate")
            expect(page.get_by_test_id("output-local")).to_contain_text("trust: calibrated")
            screenshot(page, "14-checking-model-calibrated")
    assert len(judge.calls("verifier")) == 120


def test_the_page_asks_for_the_api_token_and_sends_it_with_every_call(page, environment):
    token = "browser-test-token-7f3a9c"
    with lemmata_serve({**environment, "LEMMATA_API_TOKEN": token}, Path(environment["LEMMATA_HOME"]).parent) as served:
        base = served.base_url
        page.goto(f"{base}/#tab=settings")
        asked = page.get_by_label("Token", exact=True)
        expect(asked).to_be_visible()
        screenshot(page, "13-token-asked")
        asked.fill("not-the-token")
        with page.expect_response(lambda r: "/api/" in r.url and r.status == 401):
            page.get_by_role("button", name="Use token").click()
        expect(asked).to_be_visible()
        asked.fill(token)
        page.get_by_role("button", name="Use token").click()
        expect(page.get_by_label("MAX_TOKENS_PROVER")).to_be_visible()
        expect(asked).to_be_hidden()
        runs = httpx.get(f"{base}/api/runs", headers={"Authorization": f"Bearer {token}"}).json()["runs"]
        expect(page.get_by_test_id("run-select").locator("option")).to_have_count(1 + len(runs))
        assert token not in page.content() and token not in page.url
