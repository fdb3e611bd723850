from __future__ import annotations

from evalflow.repo.scopes import ParsedFile, RepoScopes, is_inert_class, script_file

WORKER = """import logging

class BackfillWorker:
    def __init__(self):
        self.logger = logging.getLogger(__name__)
        self.is_running = False

    async def start(self):
        self.logger.info('Starting backfill worker...')
        self.is_running = True

    def running(self):
        return self.is_running
"""


def first_class(path: str, text: str):
    parsed = ParsedFile(path, text, "python" if path.endswith(".py") else "javascript")
    return next(n for n in parsed._nodes({"class_definition", "class_declaration"}))


def test_a_class_that_only_logs_and_flips_flags_is_inert() -> None:
    assert is_inert_class(first_class("w.py", WORKER))
    js = "class Worker {\n  start() { console.log('go'); this.running = true; }\n}\n"
    assert is_inert_class(first_class("w.js", js))


def test_a_class_that_calls_anything_else_or_inherits_is_not_inert() -> None:
    working = WORKER.replace("self.is_running = True", "self.task = spawn(self.fill)")
    assert not is_inert_class(first_class("w.py", working))
    # A base class or a decorator may supply the behaviour (a model, a dataclass, a thread).
    assert not is_inert_class(first_class("w.py", WORKER.replace("Worker:", "Worker(Thread):")))
    assert not is_inert_class(first_class("w.py", "@dataclass\n" + WORKER.split("\n", 2)[2]))
    js = "class W extends Base {\n  start() { this.running = true; }\n}\n"
    assert not is_inert_class(first_class("w.js", js))


def test_a_match_on_an_inert_class_is_a_stub() -> None:
    scopes = RepoScopes({"w.py": WORKER, "main.py": "from w import BackfillWorker\n"})
    why = scopes.disqualifier("w.py", 3, 0, len("class BackfillWorker"))
    assert why == "stub: class `BackfillWorker` (line 3) only logs and sets or returns constants"


def test_script_file_separates_static_imports_from_other_loads() -> None:
    text = """import a from './a'
import type { T } from './t'
import './side.css'
export * from './y'
const m = import('./m')
const r = require('./r')
const w = new Worker(new URL('./worker.js', import.meta.url))
"""
    ref = script_file(ParsedFile("src/x.ts", text, "typescript"))
    assert ref.static == ("./a", "./side.css", "./y")
    assert set(ref.loads) == {"./t", "./m", "./r", "./worker.js"}
    assert ref.dynamic is None and not ref.strict  # TypeScript drops type-only imports
    assert script_file(ParsedFile("src/x.js", "import a from './a'\n", "javascript")).strict
    jest = "module.exports = { setupFiles: ['<rootDir>/jest.setup.js'] }\n"
    assert script_file(ParsedFile("jest.config.js", jest, "javascript")).loads == (
        "/jest.setup.js",
    )


def test_script_file_names_a_computed_load() -> None:
    for text in ("const m = await import(name)\n", "const p = import.meta.glob('./p/*.js')\n"):
        assert script_file(ParsedFile("src/x.js", text, "javascript")).dynamic
