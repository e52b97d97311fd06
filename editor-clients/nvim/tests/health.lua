-- End-to-end tests of what the Neovim plugin reports: the errors of commands without a
-- session, :checkhealth agentls (a probe, then the running server), the server's warnings
-- (window/logMessage) and :help, against the real server on the faux provider.
--
--   nvim --headless --clean -l editor-clients/nvim/tests/health.lua [AGENTLS_EXECUTABLE]
--
-- Alone, or with the other features in one Neovim and one server (run.lua); per-test lines
-- on stdout, "N passed, M failed" last.
local here = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p")))
package.path = here .. "/?.lua;" .. package.path

local h = require("helpers")
local env = h.start()
local client = require("agentls.client")

local test, expect = h.test, h.expect

test("commands without a session or text say what is wrong", function()
  h.notes = {}
  vim.cmd("AgentSteer")
  expect(h.noted("no session to steer", vim.log.levels.ERROR), "an error for :AgentSteer without a session")
  vim.cmd("AgentAbort")
  expect(h.noted("no session to abort", vim.log.levels.ERROR), "an error for :AgentAbort without a session")
  vim.cmd("AgentModel not-a-model")
  expect(h.noted('model must be "provider/id"', vim.log.levels.ERROR), "an error for a bad model name")
end)

test("checkhealth starts the server once and reports its version and capabilities", function()
  local report = h.checkhealth()
  expect(report:find("server command: " .. h.agentls_exe, 1, true), "names the server command:\n" .. report)
  expect(report:find("server: agentls %d+%.%d+"), "reports the version:\n" .. report)
  expect(report:find("protocol version 1", 1, true), "reports the protocol version:\n" .. report)
  expect(report:find("editorWorkspace", 1, true), "lists the features:\n" .. report)
  expect(report:find("models: faux/faux%-1"), "lists the models:\n" .. report)
  local context = "context files (a new session): " .. env.ws .. "/AGENTS.md"
  expect(report:find(context, 1, true), "lists the context files:\n" .. report)
  expect(report:find("prompt templates and skills: /review", 1, true), "lists the templates:\n" .. report)
  expect(client.get() == nil, "the probe leaves no client running")
end)

test("checkhealth reports the running server", function()
  h.settled_run({ { content = "Hello." } }, "hello")
  local report = h.checkhealth()
  expect(report:find("running: client", 1, true), "says it runs:\n" .. report)
  expect(report:find("server: agentls %d+%.%d+"), "reports the version:\n" .. report)
  expect(report:find("models: faux/faux%-1"), "lists the models:\n" .. report)
  local context = "context files (current session): " .. env.ws .. "/AGENTS.md"
  expect(report:find(context, 1, true), "lists the current session's context files:\n" .. report)
  expect(h.panel_text():find("^Context: AGENTS.md\n"), "the panel's header lists them:\n" .. h.panel_text())
end)

test("the server's warnings are notified (window/logMessage); :help agentls works", function()
  h.notes = {}
  local handler = client.get().handlers["window/logMessage"]
  handler(nil, { type = 2, message = "anthropic: 429 rate limited, retrying in 2 s (attempt 2 of 4)" }, {
    client_id = client.id,
    method = "window/logMessage",
  })
  handler(nil, { type = 4, message = "just a log line" }, { client_id = client.id, method = "window/logMessage" })
  expect(h.noted("agentls: anthropic: 429 rate limited", vim.log.levels.WARN), "the retry warning is shown")
  expect(not h.noted("just a log line"), "log lines stay in the log")
  expect(vim.fn.filereadable(h.plugin_root .. "/doc/tags") == 1, "doc/tags exists")
  local ok, err = pcall(vim.cmd.help, "agentls")
  expect(ok, tostring(err))
  expect(vim.fn.expand("%:t") == "agentls.txt", vim.fn.expand("%:t"))
  vim.cmd("helpclose")
end)

test("notifications are one line (several would make Neovim wait for Press ENTER)", function()
  h.notes = {}
  local handler = client.get().handlers["window/logMessage"]
  handler(nil, { type = 1, message = "the provider failed:\n  401 Unauthorized\n\nset the key" }, {
    client_id = client.id,
    method = "window/logMessage",
  })
  local joined = "agentls: the provider failed: · 401 Unauthorized · set the key"
  expect(h.noted(joined, vim.log.levels.ERROR), vim.inspect(h.notes))
  h.without_session()
  h.script({ { content = "", stopReason = "error", errorMessage = "it broke:\nline two\r\nline three" } })
  local session = h.new_session()
  h.settles(session, function()
    vim.cmd("AgentPrompt fail")
    require("agentls.panel").close() -- the run ends out of sight: a notification says so
  end)
  expect(h.noted("stopped with an error (session " .. session:sub(1, 8) .. "): it broke: · line two · line three"),
    vim.inspect(h.notes))
  for _, note in ipairs(h.notes) do
    expect(not note.message:find("\n"), "one line: " .. note.message)
  end
end)

h.finish()
