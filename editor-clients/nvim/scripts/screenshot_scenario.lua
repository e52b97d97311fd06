-- The scene of the README's screenshot, played by a real Neovim against the real server on
-- the faux provider: a file on the left, the panel on the right with a finished read and
-- edit, a bash tool running with partial output, and a queued follow-up.
--
-- Run by scripts/screenshot.py (nvim --embed, a UI attached); $AGENTLS_CMD names the server.
-- When the scene is set it sends the notification "agentls_screenshot_ready" to the UI.
local here = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p")))
vim.opt.runtimepath:prepend(vim.fs.dirname(here))
vim.cmd.runtime("plugin/agentls.lua")

local root = vim.fn.tempname()
local ws = root .. "/calc"
vim.fn.mkdir(ws, "p")
vim.fn.mkdir(root .. "/data", "p")
vim.fn.writefile({
  "def sum_to(n):",
  '    """The sum 1 + 2 + ... + n."""',
  "    total = 0",
  "    for i in range(1, n):",
  "        total += i",
  "    return total",
  "",
  "",
  "def mean(values):",
  "    return sum(values) / len(values)",
}, ws .. "/calc.py")
vim.fn.writefile({
  "echo 'test_sum_to ........ ok'",
  "sleep 0.3",
  "echo 'test_mean .......... ok'",
  "sleep 0.3",
  "echo 'test_empty_mean .... running'",
  "sleep 30",
}, ws .. "/run_tests.sh")

local function call(id, name, arguments)
  return { type = "toolCall", id = id, name = name, arguments = arguments }
end

vim.fn.writefile({
  vim.json.encode({
    responses = {
      {
        content = {
          { type = "thinking", thinking = "The tests say sum_to(3) is 3, so the loop stops one short." },
          { type = "text", text = "Let me read calc.py first." },
          call("c1", "read", { path = "calc.py" }),
        },
        stopReason = "toolUse",
      },
      {
        content = {
          { type = "text", text = "`range(1, n)` leaves out n itself. Fixing the bound:" },
          call("c2", "edit", {
            path = "calc.py",
            edits = { { oldText = "range(1, n)", newText = "range(1, n + 1)" } },
          }),
        },
        stopReason = "toolUse",
      },
      {
        content = { { type = "text", text = "Now the tests:" }, call("c3", "bash", { command = "sh run_tests.sh" }) },
        stopReason = "toolUse",
      },
      { content = "All tests pass." },
    },
  }),
}, root .. "/faux.json")

vim.cmd.cd(ws)
vim.o.number = true
vim.o.laststatus = 3
vim.o.statusline = " %f %m%=%<%{v:lua.require'agentls'.status()} "
vim.o.showmode = false
vim.cmd.edit("calc.py")

require("agentls").setup({
  cmd = { vim.env.AGENTLS_CMD or "agentls", "serve" },
  init_options = { fauxScript = root .. "/faux.json", dataDir = root .. "/data" },
  panel = { width = 66 },
})

vim.ui.select = function(items, _, on_choice) -- the user allows the test run once
  vim.schedule(function()
    on_choice(items[1])
  end)
end

local state = require("agentls.state")
local panel = require("agentls.panel")
vim.cmd("AgentPrompt sum_to(3) returns 3 instead of 6. Fix it and run the tests.")
local function shows(text)
  return table.concat(panel.lines(), "\n"):find(text, 1, true) ~= nil
end
local ok = vim.wait(20000, function()
  return shows("test_empty_mean")
end, 20)
vim.cmd("AgentFollowUp Then add a test for mean([]).")
ok = ok and vim.wait(5000, function()
  return shows("follow-up: Then add")
end, 20)
if not ok then
  io.stderr:write("the scene did not come together:\n" .. table.concat(panel.lines(), "\n") .. "\n")
end
vim.cmd("wincmd h")
vim.api.nvim_win_set_cursor(0, { 4, 24 })
vim.defer_fn(function()
  vim.cmd("redraw!")
  vim.rpcnotify(0, "agentls_screenshot_ready", ok, state.current)
end, 300)
