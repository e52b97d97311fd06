-- End-to-end tests of the safety rails in the Neovim plugin: setup{}'s sandbox and budget
-- (validated, sent as initialization options), the sandbox badge in the panel's winbar and in
-- :checkhealth (enforced by this kernel's Landlock, or refused: the badge shows what
-- agent/getState says), the spend against the budget, the budget question (stop: the notice;
-- continue: the limit raised), the sandbox question (run once OUTSIDE the sandbox) and
-- :AgentBudget, against the real server on the faux provider.
--
--   nvim --headless --clean -l editor-clients/nvim/tests/safety.lua [AGENTLS_EXECUTABLE]
--
-- Alone, or with the other features in one Neovim and one server (run.lua; it restarts the
-- server with its options, and again with the suite's at its end); per-test lines on stdout,
-- "N passed, M failed" last.
local here = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p")))
package.path = here .. "/?.lua;" .. package.path

local h = require("helpers")
local env = h.start()
local client = require("agentls.client")
local config = require("agentls.config")
local panel = require("agentls.panel")
local permissions = require("agentls.permissions")
local state = require("agentls.state")

local test, wait, expect = h.test, h.wait, h.expect

-- Neovim's own width (review.lua leaves the editor at 160 columns: a tab that :checkhealth
-- opens would draw a tabline wider than the grid of 80)
if vim.o.columns ~= 80 then
  h.resize(80)
end

--- Stop the server, then setup{} with the suite's options and `extra` (the next command starts
--- a server with them).
local function restart(extra)
  client.stop()
  wait(5000, function()
    return client.get() == nil
  end, "the server stopped")
  h.notes = {}
  require("agentls").setup(vim.tbl_deep_extend("force", vim.deepcopy(h.setup_opts), extra or {}))
  expect(#h.notes == 0, "setup warned: " .. vim.inspect(h.notes))
  h.without_session()
end

--- The session's agent/getState, read now.
local function get_state(session)
  local result = client.request_sync("agent/getState", { sessionId = session }, 5000)
  assert(result, "agent/getState answered")
  return result
end

--- The winbar of the session's panel at 100 columns once it contains `text`.
local function wide_winbar_shows(session, text, what)
  local bar
  local ok = vim.wait(5000, function()
    bar = require("agentls.render").winbar(state.transcripts[session], {}, 100)
    return bar:find(text, 1, true) ~= nil
  end, 10)
  if not ok then
    error(("timed out waiting for %s: %s"):format(what, bar), 2)
  end
end

--- The panel's winbar of the current session, fitted to 64 columns (the panel's width in an
--- editor of 160, as h.at_widths makes it: room for the model, the badge and the spend), once
--- `predicate(winbar)` holds. (The editor is not resized here: with the tabs an earlier
--- feature leaves, Neovim would draw a tabline wider than its grid.)
local function winbar_when(predicate, what)
  panel.open(false)
  local bar
  local ok = vim.wait(5000, function()
    panel.render()
    bar = require("agentls.render").winbar(state.current_transcript(), {}, 64)
    return predicate(bar)
  end, 10)
  if not ok then
    error(("timed out waiting for %s: %s"):format(what, bar), 2)
  end
  return bar
end

local function ls_turn(id)
  return h.tool_call(id, "ls", { path = "." })
end

test("setup{}: sandbox and budget are validated (typos named) and sent camelCase", function()
  h.notes = {}
  require("agentls").setup(vim.tbl_extend("force", h.setup_opts, {
    sandbox = { mod = "read-only", mode = "workspace-write", writable_root = {} },
    budget = { max_turn = 3, session = { max_cost_usd = 2, max_tokns = 9 } },
  }))
  local warn = vim.log.levels.WARN
  expect(h.noted("unknown option sandbox.mod (did you mean sandbox.mode?)", warn), vim.inspect(h.notes))
  expect(h.noted("unknown option sandbox.writable_root (did you mean sandbox.writable_roots?)", warn), vim.inspect(h.notes))
  expect(h.noted("unknown option budget.max_turn (did you mean budget.max_turns?)", warn), vim.inspect(h.notes))
  expect(h.noted("unknown option budget.session.max_tokns (did you mean budget.session.max_tokens?)", warn),
    vim.inspect(h.notes))
  local bad = {
    { { sandbox = { mode = "strict" } }, 'sandbox.mode must be "off", "workspace-write" or "read-only", not "strict"' },
    { { sandbox = { mode = "read-only", network = "yes" } }, "sandbox.network must be true or false" },
    { { sandbox = { mode = "read-only", writable_roots = ".git" } }, "sandbox.writable_roots must be a list" },
    { { sandbox = { mode = "read-only", fallback = "allow" } }, 'sandbox.fallback must be "refuse" or "unconfined"' },
    { { budget = { max_turns = 2.5 } }, "budget.max_turns must be a positive whole number, not 2.5" },
    { { budget = { max_cost_usd = 0 } }, "budget.max_cost_usd must be a positive number, not 0" },
    { { budget = { session = { max_tokens = -1 } } }, "budget.session.max_tokens must be a positive whole number" },
  }
  for _, case in ipairs(bad) do
    local ok, err = config.set(vim.tbl_extend("force", h.setup_opts, case[1]))
    expect(not ok and tostring(err):find(case[2], 1, true), ("%s: %s"):format(vim.inspect(case[1]), tostring(err)))
  end
  h.notes = {}
  require("agentls").setup(vim.tbl_extend("force", h.setup_opts, {
    sandbox = { mode = "workspace-write", network = false, writable_roots = { "cache" }, fallback = "refuse" },
    budget = { max_cost_usd = 1.5, max_turns = 4, session = { max_tokens = 100000 } },
  }))
  expect(#h.notes == 0, vim.inspect(h.notes))
  local init = client.init_options()
  expect(vim.deep_equal(init.sandbox, { mode = "workspace-write", network = false, writableRoots = { "cache" },
    fallback = "refuse" }), vim.inspect(init.sandbox))
  expect(vim.deep_equal(init.budget, { maxCostUsd = 1.5, maxTurns = 4, session = { maxTokens = 100000 } }),
    vim.inspect(init.budget))
  config.set(h.setup_opts)
end)

local sandboxed -- whether this kernel enforces the sandbox (agent/getState's status)

test("the winbar shows the sandbox agent/getState reports, and :checkhealth its mode, network, roots and status", function()
  restart({ sandbox = { mode = "workspace-write", writable_roots = { "cache" } }, budget = { max_turns = 2 } })
  h.script({ { content = "Hello." } })
  local session = h.new_session()
  local sandbox = get_state(session).sandbox
  expect(type(sandbox) == "table" and sandbox.mode == "workspace-write", vim.inspect(sandbox))
  sandboxed = sandbox.status == "enforced"
  local want = ({
    enforced = "sandbox: workspace-write, no network",
    refused = "sandbox refused: workspace-write",
    unconfined = "unsandboxed: workspace-write not enforced",
  })[sandbox.status]
  expect(want, "a status the badge shows: " .. vim.inspect(sandbox))
  local group = ({ enforced = "AgentlsSandbox", refused = "AgentlsSandboxRefused", unconfined = "AgentlsSandboxUnconfined" })[sandbox.status]
  local short = ({ enforced = "sandbox:ws no-net", refused = "sandbox refused", unconfined = "unsandboxed" })[sandbox.status]
  local t = state.transcripts[session]
  wait(5000, function()
    return t.sandbox ~= nil and t.budget ~= nil
  end, "the state read")
  local render = require("agentls.render")
  local wide = render.winbar(t, {}, 200)
  expect(wide:find("%#" .. group .. "#" .. want, 1, true) and wide:find("0/2 turns", 1, true), "at 200 columns: " .. wide)
  -- the panel's window (78 columns): the badge is shortened, the spend stays; narrower, the
  -- spend goes before the badge
  winbar_when(function(bar)
    return bar:find("%#" .. group .. "#" .. short, 1, true) ~= nil
  end, "the badge " .. short)
  local narrow = render.winbar(t, {}, 50)
  expect(narrow:find(short, 1, true) and not narrow:find("faux", 1, true), "at 50 columns: " .. narrow)
  local report = h.checkhealth()
  local head = ("sandbox (current session): mode workspace-write, network off, status %s"):format(sandbox.status)
  expect(report:find(head, 1, true), "names the mode, network and status:\n" .. report)
  expect(report:find("sandbox writable roots: " .. env.ws, 1, true), "lists the writable roots:\n" .. report)
  expect(report:find(env.ws .. "/cache", 1, true), "with writable_roots:\n" .. report)
  expect(report:find("budget (current session): 0/2 turns", 1, true), "the budget:\n" .. report)
  if sandbox.status == "refused" then
    expect(report:find("WARNING sandbox", 1, true), "a warning when refused:\n" .. report)
  end
end)

test("max_turns = 2: the budget question in the panel, answered stop: the notice and the spend", function()
  expect(permissions.in_panel(), "the stock vim.ui.select: the panel asks")
  h.script({ ls_turn("b1"), ls_turn("b2"), ls_turn("b3"), { content = "Not reached." } })
  local session = h.new_session()
  vim.cmd("AgentPrompt list the folder, again and again")
  local title = "The run reached its budget: 2 of 2 turns. Go on?"
  wait(10000, function()
    panel.render()
    return h.panel_text():find(title, 1, true) ~= nil
  end, "the budget question's row")
  local text = h.panel_text()
  h.expect_shown(text, {
    "limit: 2 turns (this run) · used: 2 turns",
    "waiting for you: a Continue, the limit raised to 4 turns · r Stop",
  })
  expect(h.noted(title, vim.log.levels.WARN), "a notification says it waits: " .. vim.inspect(h.notes))
  wide_winbar_shows(session, "2/2 turns", "the spend, turn by turn")
  h.panel_keys(title, "r")
  local settled = h.wait_settled(session)
  expect(settled and vim.deep_equal(settled.budget, { kind = "maxTurns", scope = "run", limit = 2, used = 2 }),
    vim.inspect(settled))
  text = h.panel_text()
  h.expect_shown(text, { "Stopped by the run's budget: 2 of 2 turns.", ":AgentContinue goes on" })
  expect(not text:find("Not reached.", 1, true), "no third turn:\n" .. text)
  expect(not text:find(title, 1, true), "the question is gone:\n" .. text)
  wide_winbar_shows(session, "%#AgentlsNotice#2/2 turns", "the spend, the limit reached")
end)

test("the budget question through vim.ui.select: continue raises the limit and the run goes on", function()
  h.script({ ls_turn("c1"), ls_turn("c2"), { content = "Done after three." } })
  local session = h.new_session()
  local asked = h.stub_select("raiseBudget")
  h.settles(session, function()
    vim.cmd("AgentPrompt list it twice")
  end)
  expect(#asked == 1, "asked once: " .. vim.inspect(asked))
  expect(asked[1].prompt:find("reached its budget: 2 of 2 turns. Go on? (limit: 2 turns (this run) · used: 2 turns)", 1, true),
    asked[1].prompt)
  local labels = vim.tbl_map(asked[1].format, asked[1].items)
  expect(vim.deep_equal(labels, { "Continue, the limit raised to 4 turns", "Stop" }), vim.inspect(labels))
  h.expect_shown(h.panel_text(), { "Done after three." })
  winbar_when(function(bar)
    return bar:find("3/2 turns", 1, true) ~= nil or bar:find("3/4 turns", 1, true) ~= nil
  end, "three turns spent")
end)

test("a command the sandbox denied: the question says OUTSIDE the sandbox, shows the command; kept, then allowed", function()
  if not sandboxed then
    io.stdout:write("     (this kernel does not enforce the sandbox: the escalation is not asked)\n")
    return
  end
  local outside = vim.fs.dirname(env.ws) .. "/outside.txt"
  local command = "touch ../outside.txt"
  local seen = {}
  local function answer(yes)
    return function(items)
      for _, item in ipairs(items) do
        if item.id == "allowOnce" then
          return item
        end
      end
      seen[#seen + 1] = h.panel_text()
      for _, item in ipairs(items) do
        if item.id == (yes and "runUnsandboxed" or "reject") then
          return item
        end
      end
    end
  end
  for _, yes in ipairs({ false, true }) do
    h.script({ h.tool_call(yes and "s2" or "s1", "bash", { command = command }), { content = "Tried." } })
    local session = h.new_session()
    local asked = h.stub_select(answer(yes))
    h.settles(session, function()
      vim.cmd("AgentPrompt touch it")
    end)
    expect(#asked == 2, "the tool's question, then the sandbox's: " .. vim.inspect(asked))
    expect(asked[2].prompt:find("run it once OUTSIDE the sandbox, unconfined? The sandbox denied: " .. command, 1, true),
      asked[2].prompt)
    expect(asked[2].prompt:find("Permission denied", 1, true), "names what was denied: " .. asked[2].prompt)
    local labels = vim.tbl_map(asked[2].format, asked[2].items)
    expect(vim.deep_equal(labels, { "Run once outside the sandbox", "Keep the failure" }), vim.inspect(labels))
    h.expect_shown(seen[#seen], {
      "⚠ the sandbox denied it; run it once OUTSIDE the sandbox, unconfined?",
      "command: " .. command,
      "waiting for you: a Run once OUTSIDE the sandbox · r Keep the failure",
    })
    expect((vim.fn.filereadable(outside) == 1) == yes, (yes and "ran outside: " or "kept the failure: ") .. outside)
    vim.fn.delete(outside)
  end
  -- in the panel (Neovim's own vim.ui.select), under bypass (bash asks nothing, the sandbox
  -- still does): a on the row runs it once outside
  vim.ui.select = h.original_select
  expect(permissions.in_panel(), "the panel asks")
  h.script({ h.tool_call("s3", "bash", { command = command }), { content = "Tried." } })
  local session = h.new_session()
  vim.cmd("AgentMode bypass")
  wait(5000, function()
    return state.transcripts[session].permission_preset == "bypass"
  end, "bypass")
  h.notes = {}
  vim.cmd("AgentPrompt touch it")
  wait(10000, function()
    panel.render()
    return h.panel_text():find("OUTSIDE the sandbox · r Keep the failure", 1, true) ~= nil
  end, "the sandbox question's row")
  expect(h.noted("run it once OUTSIDE the sandbox, unconfined? The sandbox denied: " .. command, vim.log.levels.WARN),
    vim.inspect(h.notes))
  h.settles(session, function()
    h.panel_keys("command: " .. command, "a")
  end)
  expect(vim.fn.filereadable(outside) == 1, "ran outside: " .. outside)
  expect(h.tool_results(session).s3.text:find("Run outside the sandbox, once", 1, true), vim.inspect(h.tool_results(session)))
  vim.fn.delete(outside)
end)

test(":AgentBudget sets, changes and lifts the session's limits (agent/setBudget); completion and validation", function()
  h.script({ { content = "Hi." } })
  local session = h.new_session()
  h.notes = {}
  vim.cmd("AgentBudget")
  wait(5000, function()
    return h.noted("budget (spent of the limit): 0/2 turns (:AgentBudget LIMIT=N|off changes it)")
  end, "without arguments, the limits of setup{}: " .. vim.inspect(h.notes))
  vim.cmd("AgentBudget max_turns=5 session.max_cost_usd=2.5")
  wait(5000, function()
    local limits = get_state(session).budget.limits
    return limits.maxTurns == 5 and limits.session and limits.session.maxCostUsd == 2.5
  end, "the limits set: " .. vim.inspect(get_state(session).budget))
  wait(5000, function()
    return h.noted("budget (spent of the limit): 0/5 turns session $0.00/$2.50")
  end, "a notification with the new limits: " .. vim.inspect(h.notes))
  vim.cmd("AgentBudget max_tokens=50000 max_turns=off")
  wait(5000, function()
    local limits = get_state(session).budget.limits
    return limits.maxTurns == nil and limits.maxTokens == 50000 and limits.session and limits.session.maxCostUsd == 2.5
  end, "max_turns lifted, the others kept: " .. vim.inspect(get_state(session).budget))
  wait(5000, function()
    local spend = require("agentls.render").budget_spend(state.transcripts[session].budget)
    return spend and spend.text == "0/50.0k tokens session $0.00/$2.50"
  end, "the new limits' spend")
  h.notes = {}
  vim.cmd("AgentBudget max_turns=0")
  vim.cmd("AgentBudget max_turn=3")
  vim.cmd("AgentBudget twenty")
  expect(h.noted(":AgentBudget: max_turns must be a positive whole number or off, not \"0\"", vim.log.levels.ERROR),
    vim.inspect(h.notes))
  expect(h.noted("unknown limit max_turn (did you mean max_turns?)", vim.log.levels.ERROR), vim.inspect(h.notes))
  expect(h.noted('not LIMIT=VALUE: "twenty"', vim.log.levels.ERROR), vim.inspect(h.notes))
  vim.cmd("AgentBudget off")
  wait(5000, function()
    return next(get_state(session).budget.limits) == nil
  end, "every limit lifted: " .. vim.inspect(get_state(session).budget))
  local completion = vim.fn.getcompletion("AgentBudget max_t", "cmdline")
  expect(vim.deep_equal(completion, { "max_turns=", "max_tokens=" }), vim.inspect(completion))
  completion = vim.fn.getcompletion("AgentBudget ", "cmdline")
  expect(vim.tbl_contains(completion, "session.max_cost_usd=") and vim.tbl_contains(completion, "off"), vim.inspect(completion))
  completion = vim.fn.getcompletion("AgentBudget max_turns=3 ", "cmdline")
  expect(not vim.tbl_contains(completion, "max_turns=") and not vim.tbl_contains(completion, "off"), vim.inspect(completion))
end)

test("a kernel that cannot enforce the sandbox: the badge says refused (or unconfined, with the fallback) in its own highlight, :checkhealth warns", function()
  restart({ sandbox = { mode = "workspace-write" }, cmd_env = { AGENTLS_SANDBOX_PROBE = "unsupported" } })
  h.script({ { content = "Hello." } })
  local session = h.new_session()
  local sandbox = get_state(session).sandbox
  expect(sandbox.status == "refused", vim.inspect(sandbox))
  winbar_when(function(bar)
    return bar:find("%#AgentlsSandboxRefused#sandbox refused", 1, true) ~= nil
  end, "the refused badge")
  local report = h.checkhealth()
  expect(report:find("WARNING sandbox (current session): mode workspace-write, network off, status refused", 1, true),
    report)
  expect(report:find("the agent's bash commands do not run", 1, true), report)
  -- fallback = "unconfined": the commands run, unconfined, and the badge says so
  restart({ sandbox = { mode = "workspace-write", fallback = "unconfined" }, cmd_env = { AGENTLS_SANDBOX_PROBE = "unsupported" } })
  h.script({ { content = "Hello." } })
  session = h.new_session()
  expect(get_state(session).sandbox.status == "unconfined", vim.inspect(get_state(session).sandbox))
  winbar_when(function(bar)
    return bar:find("%#AgentlsSandboxUnconfined#unsandboxed", 1, true) ~= nil
  end, "the unconfined badge")
  report = h.checkhealth()
  expect(report:find("WARNING sandbox (current session): mode workspace-write, network off, status unconfined", 1, true),
    report)
  restart()
end)

h.finish()
