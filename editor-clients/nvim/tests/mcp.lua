-- End-to-end tests of MCP servers in the Neovim plugin (:AgentMcp, the trust question, the
-- allowAlwaysServer answer, the mcp_servers option, :checkhealth), against the real server on
-- the faux provider with the quirky test server (tests/mcp/servers/quirky.py).
--
--   nvim --headless --clean -l editor-clients/nvim/tests/mcp.lua [AGENTLS_EXECUTABLE]
--
-- As the feature files of run.lua: one server for every test, per-test lines on stdout,
-- "N passed, M failed" last.
local here = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p")))
package.path = here .. "/?.lua;" .. package.path

local h = require("helpers")
local agentls_exe = h.load_plugin(arg[1])
-- the quirky server runs with the interpreter of agentls's virtual environment
local python = vim.fs.dirname(agentls_exe) .. "/python"
local quirky = vim.fs.dirname(vim.fs.dirname(h.plugin_root)) .. "/tests/mcp/servers/quirky.py"

local env = h.workspace(agentls_exe)
-- a project's server (asks for trust) and one of the mcp_servers option (the user's: at once)
vim.fn.writefile({
  vim.json.encode({ mcpServers = { quirky = { command = python, args = { quirky } } } }),
}, env.ws .. "/.mcp.json")
require("agentls").setup(vim.tbl_extend("force", h.setup_opts, {
  mcp_servers = { broken = { command = python, args = { quirky, "--fail-start" } } },
}))

local client = require("agentls.client")
local mcp = require("agentls.mcp")
local panel = require("agentls.panel")
local state = require("agentls.state")

local test, wait, expect = h.test, h.wait, h.expect

h.cancel_unexpected_questions()

local function known(name)
  for _, server in pairs(mcp.known) do
    if server.name == name and server.cwd == env.ws then
      return server
    end
  end
  return nil
end

local function text()
  return table.concat(mcp.lines(), "\n")
end

local keys_in = h.keys_in

local trust_asked
test("the mcp_servers option is the mcpServers initialization option", function()
  local options = client.init_options()
  expect(options.mcpServers and options.mcpServers.broken and options.mcpServers.broken.command == python)
  local ok, err = require("agentls.config").set({ mcp_servers = { x = { args = {} } } })
  expect(not ok and err:find("mcp_servers.x", 1, true), tostring(err))
  require("agentls.config").set(vim.tbl_extend("force", h.setup_opts, {
    mcp_servers = { broken = { command = python, args = { quirky, "--fail-start" } } },
  }))
end)

test("a project's .mcp.json asks for trust; trusted, its server starts", function()
  trust_asked = h.stub_select("allowAlways")
  h.new_session()
  wait(15000, function()
    return #trust_asked > 0
  end, "the trust question")
  local q = trust_asked[1]
  expect(q.prompt:find("Start the MCP servers of " .. env.ws .. "/.mcp.json", 1, true), q.prompt)
  expect(q.prompt:find("trusted for this folder", 1, true), q.prompt)
  local labels = vim.tbl_map(q.format, q.items)
  expect(vim.deep_equal(labels, { "Trust", "Reject" }), vim.inspect(labels))
  wait(20000, function()
    local s = known("quirky")
    return s and s.status == "ready"
  end, "quirky ready")
  wait(20000, function()
    local s = known("broken")
    return s and s.status == "failed"
  end, "broken failed")
end)

test(":AgentMcp shows the servers, their status, errors, source and tools", function()
  vim.cmd("AgentMcp")
  wait(5000, function()
    return text():find("quirky  · ready", 1, true) ~= nil
  end, "the :AgentMcp buffer")
  local shown = text()
  expect(vim.api.nvim_get_current_buf() == mcp.view.buf, "the buffer has the focus")
  expect(shown:find("stdio, " .. env.ws .. "/.mcp.json", 1, true), shown)
  expect(shown:find("tools: echo, validated", 1, true), shown)
  expect(shown:find("broken  · failed", 1, true), shown)
  expect(shown:find("stdio, initializationOptions", 1, true), shown)
  expect(shown:find("error: ", 1, true) and shown:find("failing at start on purpose", 1, true), shown)
end)

test("an MCP tool's question offers every tool of the server; its result shows", function()
  h.script({
    h.tool_call("m1", "mcp__quirky__echo", { text = "hi from quirky" }),
    { content = "Echoed." },
    h.tool_call("m2", "mcp__quirky__cwd", {}),
    { content = "Asked nothing." },
  })
  h.new_session()
  local asked = h.stub_select("allowAlwaysServer")
  vim.cmd("AgentPrompt echo it")
  h.wait_settled(state.current)
  expect(#asked == 1, ("%d questions"):format(#asked))
  local labels = vim.tbl_map(asked[1].format, asked[1].items)
  expect(labels[3] == "Allow always: every tool of quirky", vim.inspect(labels))
  expect(asked[1].prompt:find("Allow the tool echo of the MCP server quirky?", 1, true), asked[1].prompt)
  local shown = h.panel_text()
  expect(shown:find("mcp__quirky__echo", 1, true) and shown:find("hi from quirky", 1, true), shown)
  local again = h.stub_select("reject")
  local before = #h.settled
  vim.cmd("AgentPrompt where")
  wait(15000, function()
    return #h.settled > before
  end, "the second run")
  h.wait_settled(state.current)
  expect(#again == 0, "another tool of the server asks no more")
  expect(h.panel_text():find("Asked nothing.", 1, true), h.panel_text())
  local params = { toolName = "mcp__quirky__echo", options = asked[1].items }
  local hint = require("agentls.render").permission_hint(require("agentls.config").options.panel, params)
  expect(hint:find("S every tool of the server", 1, true), hint)
  local plain = require("agentls.render").permission_hint(require("agentls.config").options.panel)
  expect(not plain:find("every tool", 1, true), plain)
end)

test("R in :AgentMcp restarts the server under the cursor; L opens a log", function()
  vim.cmd("AgentMcp")
  wait(5000, function()
    return vim.api.nvim_get_current_buf() == mcp.view.buf and text():find("quirky  · ready", 1, true) ~= nil
  end, "the :AgentMcp buffer")
  local row
  for i, line in ipairs(mcp.lines()) do
    if line:find("^quirky") then
      row = i
    end
  end
  local win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_cursor(win, { row, 0 })
  local statuses = {}
  local group = vim.api.nvim_create_augroup("mcp-test", { clear = true })
  vim.api.nvim_create_autocmd("User", {
    group = group,
    pattern = "AgentlsMcpStatus",
    callback = function(args)
      if args.data.name == "quirky" then
        statuses[#statuses + 1] = args.data.status
      end
    end,
  })
  keys_in(win, "R")
  wait(20000, function()
    return h.noted("MCP server quirky restarted") and statuses[#statuses] == "ready"
  end, "quirky restarted")
  expect(vim.tbl_contains(statuses, "starting"), vim.inspect(statuses))
  wait(5000, function()
    return text():find("quirky  · ready", 1, true) ~= nil
  end, "the buffer refreshed")
  vim.api.nvim_del_augroup_by_id(group)
  for i, line in ipairs(mcp.lines()) do
    if line:find("^broken") then
      row = i
    end
  end
  vim.api.nvim_win_set_cursor(win, { row, 0 })
  keys_in(win, "L")
  local log = vim.fn.bufnr(env.data .. "/mcp-logs/broken.log")
  expect(log > 0 and #vim.fn.win_findbuf(log) == 1, "the log is open in a window")
  local content = table.concat(vim.api.nvim_buf_get_lines(log, 0, -1, false), "\n")
  expect(content:find("failing at start on purpose", 1, true), content)
  vim.api.nvim_win_close(vim.fn.win_findbuf(log)[1], true)
end)

test(":AgentMcp restart NAME; an unknown name is an error", function()
  vim.cmd("AgentMcp restart broken")
  wait(10000, function()
    return h.noted("MCP server broken restarted")
  end, "the restart")
  vim.cmd("AgentMcp restart nosuch")
  wait(5000, function()
    return h.noted("nosuch", vim.log.levels.ERROR)
  end, "the error")
  local names = mcp.complete("", "AgentMcp restart ")
  expect(vim.tbl_contains(names, "quirky") and vim.tbl_contains(names, "broken"), vim.inspect(names))
end)

test("in the panel: a changed .mcp.json asks in a trust row; A there trusts; the prompt waits; its tool runs", function()
  local options = require("agentls.config").options
  options.permission_prompt = "panel"
  vim.fn.writefile({
    vim.json.encode({ mcpServers = { quirky = { command = python, args = { quirky, "--stderr-noise" } } } }),
  }, env.ws .. "/.mcp.json")
  h.script({ h.tool_call("t1", "mcp__quirky__echo", { text = "echoed once trusted" }), { content = "Echoed." } })
  h.notes = {}
  local session = h.new_session()
  local notice = ("agentls: trust %s? The panel's trust row says what it runs; waiting for you: A trust · r reject")
    :format(env.ws)
  wait(15000, function()
    return h.noted(notice, vim.log.levels.WARN)
  end, "the trust question, notified: " .. vim.inspect(h.notes))
  vim.cmd("AgentPrompt echo it") -- sent while the question is open: its run waits for the answer
  h.wait_panel("? Start the MCP servers of " .. env.ws .. "/.mcp.json? They run: [quirky (stdio)", "the trust row")
  h.wait_panel("\n    waiting for you: A trust · r reject\n", "the trust row's keys")
  expect(not h.panel_text():find("Tool mcp__quirky__echo not found", 1, true), h.panel_text())
  panel.open(true)
  h.panel_keys("? Start the MCP servers of", "A")
  wait(20000, function()
    local s = known("quirky")
    return s and s.status == "ready"
  end, "quirky (trusted again) ready")
  h.wait_settled(session, 30000)
  local result = h.tool_results(session).t1
  expect(result and not result.error and result.text:find("echoed once trusted", 1, true), vim.inspect(result))
  expect(not h.panel_text():find("waiting for you: A trust", 1, true), "the row is gone:\n" .. h.panel_text())
  options.permission_prompt = "auto"
  panel.close()
end)

test(":checkhealth agentls lists the MCP servers", function()
  wait(20000, function()
    local s = known("broken")
    return s and s.status == "failed"
  end, "broken failed again")
  local report = h.checkhealth()
  expect(report:find("agentls: MCP servers", 1, true), report)
  expect(report:find("quirky (stdio, " .. env.ws .. "/.mcp.json): ready", 1, true), report)
  expect(report:find("WARNING broken (stdio, initializationOptions): failed", 1, true), report)
  expect(report:find("failing at start on purpose", 1, true), report)
end)

h.finish()
