-- End-to-end tests of the plugin's setup{}: an unknown option is warned about with the closest
-- valid one; per_user_server and socket make the command the bridge to the per-user server;
-- `demo = true` runs the bundled demo, against the real server on the faux provider.
--
--   nvim --headless --clean -l editor-clients/nvim/tests/setup.lua [AGENTLS_EXECUTABLE]
--
-- Alone, or with the other features in one Neovim and one server (run.lua); per-test lines
-- on stdout, "N passed, M failed" last.
local here = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p")))
package.path = here .. "/?.lua;" .. package.path

local h = require("helpers")
local env = h.start()
local config = require("agentls.config")
local state = require("agentls.state")

local test, expect = h.test, h.expect

test("an unknown setup{} key is warned about, naming the closest valid key; the rest applies", function()
  h.notes = {}
  require("agentls").setup(vim.tbl_extend("force", h.setup_opts, {
    pannel = { width = 0.5 },
    panel = { redraw_ms = 10, widht = 60, keymaps = { allow_onse = "o" } },
    prompt_when_bussy = "steer",
    frobnicate = true,
  }))
  local warn = vim.log.levels.WARN
  expect(h.noted("agentls: setup: unknown option pannel (did you mean panel?)", warn), vim.inspect(h.notes))
  expect(h.noted("unknown option panel.widht (did you mean panel.width?)", warn), vim.inspect(h.notes))
  expect(h.noted("unknown option panel.keymaps.allow_onse (did you mean panel.keymaps.allow_once?)", warn))
  expect(h.noted("unknown option prompt_when_bussy (did you mean prompt_when_busy?)", warn), vim.inspect(h.notes))
  expect(h.noted("unknown option frobnicate (the options: budget, cmd, ", warn), vim.inspect(h.notes))
  expect(config.options.panel.redraw_ms == 10, "the valid options apply")
  h.notes = {}
  require("agentls").setup(vim.tbl_extend("force", h.setup_opts, {
    model = "faux/faux-1", cmd_env = { A = "1" }, permissions = { bash = "ask" }, mcp_servers = {},
    prompt = { height = 8 }, panel = { redraw_ms = 10, keymaps = { close = "q" } },
  }))
  require("agentls").setup(h.setup_opts)
  expect(#h.notes == 0, "the valid options warn nothing: " .. vim.inspect(h.notes))
end)

test("setup{}: per_user_server and socket make the command the bridge; their typos are named", function()
  h.notes = {}
  require("agentls").setup(vim.tbl_extend("force", h.setup_opts, { per_user_sever = true, sockt = "/tmp/s.sock" }))
  local warn = vim.log.levels.WARN
  expect(h.noted("unknown option per_user_sever (did you mean per_user_server?)", warn), vim.inspect(h.notes))
  expect(h.noted("unknown option sockt (did you mean socket?)", warn), vim.inspect(h.notes))
  expect(vim.deep_equal(config.server_cmd(), h.setup_opts.cmd), vim.inspect(config.server_cmd()))
  h.notes = {}
  require("agentls").setup(vim.tbl_extend("force", h.setup_opts, { socket = "~/agentls.sock" }))
  expect(h.noted("socket applies only with per_user_server = true", warn), vim.inspect(h.notes))
  h.notes = {}
  require("agentls").setup(vim.tbl_extend("force", h.setup_opts, { per_user_server = true }))
  expect(#h.notes == 0, vim.inspect(h.notes))
  local want = vim.list_extend(vim.deepcopy(h.setup_opts.cmd), { "--attach" })
  expect(vim.deep_equal(config.server_cmd(), want), vim.inspect(config.server_cmd()))
  require("agentls").setup(vim.tbl_extend("force", h.setup_opts, { per_user_server = true, socket = "~/a.sock" }))
  expect(#h.notes == 0, vim.inspect(h.notes))
  vim.list_extend(want, { "--listen", "unix:" .. vim.fs.normalize(vim.fn.expand("~/a.sock")) })
  expect(vim.deep_equal(config.server_cmd(), want), vim.inspect(config.server_cmd()))
  local ok, err = config.set({ per_user_server = "yes" })
  expect(not ok and err == "per_user_server must be true or false", tostring(err))
  ok, err = config.set({ per_user_server = true, socket = 42 })
  expect(not ok and err:find("^socket must be the path"), tostring(err))
  require("agentls").setup(h.setup_opts)
  expect(not config.options.per_user_server, "back to one server per Neovim")
end)

test("setup({demo = true}): the bundled demo reads the workspace's README.md and answers, no faux script", function()
  local client = require("agentls.client")
  client.stop()
  h.wait(5000, function()
    return client.get() == nil
  end, "the server stopped")
  vim.fn.writefile({ "# Sample", "A sample project." }, env.ws .. "/README.md")
  local opts = vim.deepcopy(h.setup_opts)
  opts.init_options.fauxScript = nil
  opts.demo = true
  h.notes = {}
  require("agentls").setup(opts)
  expect(#h.notes == 0, vim.inspect(h.notes))
  expect(client.init_options().demo == true and client.init_options().fauxScript == nil, vim.inspect(client.init_options()))
  h.without_session()
  local session = h.new_session()
  h.settles(session, function()
    vim.cmd("AgentPrompt what is this project?")
  end)
  local text = h.panel_text()
  h.expect_shown(text, { "read  README.md", "· done", "The README introduces" })
  expect(state.transcripts[session].model.provider == "faux", vim.inspect(state.transcripts[session].model))
  local ok, err = config.set({ demo = "yes" })
  expect(not ok and err == "demo must be true or false", tostring(err))
  config.set(h.setup_opts)
  client.stop() -- the next server has the faux script again
  vim.fn.delete(env.ws .. "/README.md")
end)

h.finish()
