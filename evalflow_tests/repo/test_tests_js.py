"""JavaScript/TypeScript discovery: suites, `.each` rows, skips, assertions, mocks, levels."""

from __future__ import annotations

import textwrap

from evalflow.repo.test_inventory import (
    LevelConventions,
    TestCase,
    parse_test_file,
    scan_test_file,
)

PATH = "src/orders.test.ts"


def _src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def _line(src: str, needle: str, occurrence: int = 1) -> int:
    hits = [i + 1 for i, line in enumerate(src.splitlines()) if needle in line]
    return hits[occurrence - 1]


def _named(cases: list[TestCase]) -> dict[str, TestCase]:
    return {c.name: c for c in cases}


def test_nested_describe_ids_and_ranges() -> None:
    src = _src(
        """
        import { describe, it, expect } from "vitest";

        describe("orders", () => {
          describe("create", () => {
            it("stores the order", async () => {
              const order = await create({ id: 1 });
              expect(order.id).toBe(1);
            });
          });

          test(`cancels ${kind} orders`, () => {
            expect(cancel()).not.toBeNull();
          });
        });

        it("top level", function () {
          expect(true).toBe(true);
        });
        """
    )
    cases = parse_test_file(PATH, src)
    assert [c.test_id for c in cases] == [
        f"{PATH}::orders::create::stores the order",
        f"{PATH}::orders::cancels ${{kind}} orders",
        f"{PATH}::top level",
    ]
    stores = cases[0]
    assert (stores.start_line, stores.end_line) == (
        _line(src, 'it("stores'),
        _line(src, "expect(order.id)") + 1,
    )
    assert stores.suite == ["orders", "create"]
    assert stores.assert_lines == [_line(src, "toBe(1)")]
    assert stores.language == "typescript"
    assert stores.imports == ["vitest"]
    assert cases[1].assert_lines == [_line(src, "not.toBeNull")]


def test_modifiers_aliases_and_non_tests() -> None:
    src = _src(
        """
        const { test, expect } = require("@jest/globals");

        describe.only("suite", () => {
          it.only("only", () => { expect(1).toBe(1); });
          test.concurrent("concurrent", async () => { expect(1).toBe(1); });
          fit("focused", () => { expect(1).toBe(1); });
          specify("mocha alias", () => { expect(1).toBe(1); });
          context("context alias", () => {
            test.failing("failing", () => { expect(1).toBe(2); });
          });
          beforeEach(() => { expect(setup()).toBeTruthy(); });
          test.each; // a reference, not a call
          it.next();
        });

        test.describe("playwright suite", () => {
          test.describe.configure({ mode: "serial" });
          test.use({ locale: "en" });
          test("page works", async ({ page }) => {
            await test.step("open", async () => { await page.goto("/"); });
            await expect(page).toHaveTitle("Shop");
          });
        });
        """
    )
    cases = parse_test_file("e2e/shop.spec.js", src)
    assert [(c.suite, c.name) for c in cases] == [
        (["suite"], "only"),
        (["suite"], "concurrent"),
        (["suite"], "focused"),
        (["suite"], "mocha alias"),
        (["suite", "context alias"], "failing"),
        (["playwright suite"], "page works"),
    ]
    page = cases[-1]
    assert page.assert_lines == [_line(src, "toHaveTitle")]
    assert page.language == "javascript"
    assert page.imports == ["@jest/globals"]


def test_it_each_array_rows_each_count() -> None:
    src = _src(
        """
        it.each([
          [1, 1, 2],
          [1, 2, 3],
          [2, 2, 4],
        ])("add(%i, %i) = %i", (a, b, expected) => {
          expect(add(a, b)).toBe(expected);
        });

        test.each([{ a: 1 }, { a: 2 }])("object rows $a", ({ a }) => {
          expect(a).toBeGreaterThan(0);
        });
        """
    )
    cases = parse_test_file(PATH, src)
    add = [c for c in cases if c.name.startswith("add")]
    assert [c.test_id for c in add] == [f"{PATH}::add(%i, %i) = %i[{i}]" for i in range(3)]
    assert [c.row_line for c in add] == [
        _line(src, "[1, 1, 2]"),
        _line(src, "[1, 2, 3]"),
        _line(src, "[2, 2, 4]"),
    ]
    assert all(c.start_line == 1 and c.def_line == 1 for c in add)
    assert len([c for c in cases if c.name == "object rows $a"]) == 2


def test_tagged_template_rows_and_describe_each_product() -> None:
    src = _src(
        """
        describe.each([["memory"], ["disk"]])("store %s", (kind) => {
          it.each`
            a    | b    | expected
            ${1} | ${1} | ${2}
            ${1} | ${2} | ${3}
            ${2} | ${2} | ${4}
          `("returns $expected", ({ a, b, expected }) => {
            expect(add(a, b)).toBe(expected);
          });
        });
        """
    )
    cases = parse_test_file(PATH, src)
    assert len(cases) == 6
    template_rows = [
        _line(src, "${1} | ${1} | ${2}"),
        _line(src, "${1} | ${2} | ${3}"),
        _line(src, "${2} | ${2} | ${4}"),
    ]
    assert [c.row_line for c in cases] == template_rows * 2
    assert all(c.row_lines[0] == 1 for c in cases)
    assert cases[0].suite == ["store %s"]


def test_each_table_by_name_and_unresolved_spread() -> None:
    src = _src(
        """
        const cases = [
          ["a", 1],
          ["b", 2],
        ];

        test.each(cases)("named %s", (name, n) => {
          expect(n).toBeGreaterThan(0);
        });

        test.each([...cases, ["c", 3]])("spread %s", (name, n) => {
          expect(n).toBeGreaterThan(0);
        });
        """
    )
    result = scan_test_file(PATH, src)
    named = [c for c in result.cases if c.name == "named %s"]
    assert [c.row_line for c in named] == [_line(src, '["a", 1]'), _line(src, '["b", 2]')]
    spread = [c for c in result.cases if c.name == "spread %s"]
    assert len(spread) == 1
    assert [n.kind for n in result.notes] == ["unresolved_rows"]


def test_skips_todos_and_conditional_skips() -> None:
    src = _src(
        """
        describe.skip("skipped suite", () => {
          it("inherits skip", () => { expect(1).toBe(1); });
        });
        xdescribe("x suite", () => {
          test("also skipped", () => { expect(1).toBe(1); });
        });
        it.skip("it skip", () => { expect(1).toBe(1); });
        test.skip("test skip", () => { expect(1).toBe(1); });
        xit("xit", () => { expect(1).toBe(1); });
        xtest("xtest", () => { expect(1).toBe(1); });
        it.todo("todo later");
        it("pending without body");
        test.skipIf(process.env.CI)("conditional", () => { expect(1).toBe(1); });
        it("runs", () => { expect(1).toBe(1); });
        test("playwright inner skip", async ({ browserName }) => {
          test.skip(browserName === "webkit", "no webkit");
          expect(1).toBe(1);
        });
        """
    )
    skipped = {c.name: c.skipped for c in parse_test_file(PATH, src)}
    assert skipped == {
        "inherits skip": True,
        "also skipped": True,
        "it skip": True,
        "test skip": True,
        "xit": True,
        "xtest": True,
        "todo later": True,
        "pending without body": True,
        "conditional": False,
        "runs": False,
        "playwright inner skip": False,
    }


def test_assertion_forms() -> None:
    src = _src(
        """
        import assert from "node:assert";
        import request from "supertest";

        it("chai property", () => { expect(ok).to.be.true; });
        it("expect without matcher", () => { expect(value); });
        it("node assert", () => { assert(value); });
        it("assert member", () => { assert.strictEqual(a, b); });
        it("should style", () => { value.should.equal(3); });
        it("cypress should", () => { cy.get("#x").should("be.visible"); });
        it("supertest expect", async () => { await request(app).get("/").expect(200); });
        it("rejects", async () => { await expect(load()).rejects.toThrow("nope"); });
        it("soft", async () => { await expect.soft(page).toHaveURL("/"); });
        it("named helper", () => { expectValidOrder(order); });
        it("asymmetric only", () => { build(expect.any(String)); });
        """
    )
    asserts = {c.name: c.asserts for c in parse_test_file(PATH, src)}
    assert asserts == {
        "chai property": True,
        "expect without matcher": False,
        "node assert": True,
        "assert member": True,
        "should style": True,
        "cypress should": True,
        "supertest expect": True,
        "rejects": True,
        "soft": True,
        "named helper": True,
        "asymmetric only": False,
    }


def test_mock_only_and_mixed() -> None:
    src = _src(
        """
        it("mock only", () => {
          handle(repo);
          expect(repo.save).toHaveBeenCalledWith(order);
          expect(repo.load).toBeCalled();
          expect(repo.audit).toHaveBeenLastCalledWith("x");
          expect(notify).not.toHaveBeenCalled();
        });

        it("mock calls record", () => {
          expect(repo.save.mock.calls).toHaveLength(1);
          expect(spy.callCount).toBe(1);
        });

        it("sinon", () => {
          sinon.assert.calledOnce(spy);
          expect(spy).to.have.been.calledWith(1);
        });

        it("mixed", () => {
          const result = handle(repo);
          expect(repo.save).toHaveBeenCalled();
          expect(result.status).toBe("saved");
        });

        it("meta assertion does not decide", async () => {
          expect.assertions(1);
          await run();
          expect(spy).toHaveBeenCalledTimes(1);
        });

        it("meta assertion only", () => {
          expect.hasAssertions();
        });
        """
    )
    cases = _named(parse_test_file(PATH, src))
    mock_only = cases["mock only"]
    assert mock_only.mock_only
    assert len(mock_only.mock_assert_lines) == 4
    assert cases["mock calls record"].mock_only
    assert cases["sinon"].mock_only
    mixed = cases["mixed"]
    assert not mixed.mock_only
    assert mixed.mock_assert_lines == [_line(src, "expect(repo.save).toHaveBeenCalled();")]
    meta = cases["meta assertion does not decide"]
    assert meta.mock_only and len(meta.assert_lines) == 2
    only_meta = cases["meta assertion only"]
    assert only_meta.asserts and not only_meta.mock_only


def test_local_helpers_count_at_the_call_line() -> None:
    src = _src(
        """
        function expectOk(res) {
          expect(res.status).toBe(200);
        }
        const checkSaved = (repo) => {
          expect(repo.save).toHaveBeenCalled();
        };
        const wrapper = async (res) => {
          expectOk(res);
        };
        function build() {
          return {};
        }

        describe("api", () => {
          const verifyEmpty = (list) => expect(list).toHaveLength(0);

          it("uses helper chain", async () => {
            const res = await get();
            await wrapper(res);
          });
          it("uses mock helper", () => {
            checkSaved(repo);
          });
          it("uses nested helper", () => {
            verifyEmpty([]);
          });
          it("builds only", () => {
            build();
          });
          it("inline callback asserts", () => {
            [1, 2].forEach((n) => expect(n).toBeGreaterThan(0));
          });
        });
        """
    )
    cases = _named(parse_test_file(PATH, src))
    chain = cases["uses helper chain"]
    assert chain.assert_lines == [_line(src, "await wrapper(res)")]
    assert not chain.mock_only
    assert cases["uses mock helper"].mock_only
    assert cases["uses nested helper"].asserts
    assert not cases["builds only"].asserts
    assert cases["inline callback asserts"].asserts


def test_tsx_and_javascript_grammars() -> None:
    tsx = _src(
        """
        import { render, screen } from "@testing-library/react";

        it("renders", () => {
          render(<Button label={"Go" as string} />);
          expect(screen.getByText("Go")).toBeInTheDocument();
        });
        """
    )
    result = scan_test_file("src/Button.test.tsx", tsx)
    assert result.notes == []
    (case,) = result.cases
    assert case.language == "typescript" and case.asserts
    jsx = "it('renders', () => { expect(render(<App />)).toBeTruthy(); });\n"
    result = scan_test_file("src/__tests__/App.jsx", jsx)
    assert result.notes == [] and result.cases[0].language == "javascript"


def test_levels_by_import_path_and_tag() -> None:
    body = "it('works', () => { expect(1).toBe(1); });\n"
    assert parse_test_file("src/a.test.ts", body)[0].level == "unit"
    supertest = "import request from 'supertest';\n" + body
    (case,) = parse_test_file("src/a.test.ts", supertest)
    assert (case.level, case.level_reason) == ("e2e", "import:supertest")
    playwright = "const { test, expect } = require('@playwright/test');\n" + body
    assert parse_test_file("src/a.test.js", playwright)[0].level_reason == "import:@playwright/test"
    containers = "import { PostgreSqlContainer } from '@testcontainers/postgresql';\n" + body
    assert parse_test_file("src/a.test.ts", containers)[0].level == "e2e"
    assert parse_test_file("test/app.e2e-spec.ts", body)[0].level_reason == "path:*.e2e-spec.*"
    tagged = _src(
        """
        describe("checkout @e2e", () => {
          it("pays", () => { expect(1).toBe(1); });
        });
        test("tagged option", { tag: ["@integration"] }, async () => { expect(1).toBe(1); });
        test("unit tag @unit", () => { expect(1).toBe(1); });
        """
    )
    levels = {c.name: (c.level, c.level_reason) for c in parse_test_file("e2e/x.spec.ts", tagged)}
    assert levels == {
        "pays": ("e2e", "marker:e2e"),
        "tagged option": ("e2e", "marker:integration"),
        "unit tag @unit": ("unit", "marker:unit"),
    }


def test_duplicate_titles_get_ordinal_suffixes() -> None:
    src = _src(
        """
        describe("s", () => {
          it("same", () => { expect(1).toBe(1); });
          it("same", () => { expect(2).toBe(2); });
          it("same", () => { expect(3).toBe(3); });
        });
        """
    )
    ids = [c.test_id for c in parse_test_file(PATH, src)]
    assert ids == [f"{PATH}::s::same", f"{PATH}::s::same#2", f"{PATH}::s::same#3"]
    assert len(set(ids)) == 3


def test_multi_line_expect_chains_cover_all_their_lines() -> None:
    src = _src(
        """
        it("emits the trigger payload", async () => {
          const payload = await emitTrigger(user);
          expect(payload).toEqual({
            userId: user.id,
            trialEndsAt: "2025-01-01",
          });
          await expect(
            load(),
          ).rejects.toThrow("missing");
          expect(spy)
            .toHaveBeenCalledWith(1);
          const unrelated = { userId: 3 };
        });
        """
    )
    (case,) = parse_test_file(PATH, src)
    equal = _line(src, "expect(payload).toEqual")
    rejects = _line(src, "await expect(")
    spy = _line(src, "expect(spy)")
    assert case.assert_lines == [
        *range(equal, equal + 4),
        *range(rejects, rejects + 3),
        spy,
        spy + 1,
    ]
    assert case.mock_assert_lines == [spy, spy + 1]
    assert _line(src, "trialEndsAt") in case.assert_lines
    assert _line(src, "const unrelated") not in case.assert_lines


def test_configured_assertion_helpers_in_js() -> None:
    src = "it('x', () => { verifyResponse(res); });\nit('y', () => { page.checkTitle(); });\n"
    assert [c.asserts for c in parse_test_file(PATH, src)] == [False, False]
    configured = LevelConventions(assertion_helpers=["verify[A-Z].*", "check[A-Z].*"])
    assert [c.asserts for c in parse_test_file(PATH, src, configured)] == [True, True]


def test_named_function_as_test_body() -> None:
    src = _src(
        """
        async function runCase() {
          expect(await load()).toEqual({ ok: true });
        }
        function noop() {}

        test.each([[1], [2]])("case %i", runCase);
        it("noop body", noop);
        it("imported body", importedCase);
        """
    )
    cases = parse_test_file(PATH, src)
    assert [(c.name, c.asserts, c.skipped) for c in cases] == [
        ("case %i", True, False),
        ("case %i", True, False),
        ("noop body", False, False),
        ("imported body", False, False),
    ]
    assert cases[0].assert_lines == [_line(src, "test.each")]
