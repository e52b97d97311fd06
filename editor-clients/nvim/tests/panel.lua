-- End-to-end tests of what the Neovim plugin's panel shows and how it opens: the coding
-- agent's roles, an edit's diff and <CR> folding, markdown and thinking, its width, its keys,
-- split and float, against the real server on the faux provider.
--
--   nvim --headless --clean -l editor-clients/nvim/tests/panel.lua [AGENTLS_EXECUTABLE]
--
-- Alone, or with the other features in one Neovim and one server (run.lua); per-test lines
-- on stdout, "N passed, M failed" last.
local here = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p")))
package.path = here .. "/?.lua;" .. package.path

local h = require("helpers")
local env = h.start()
local panel = require("agentls.panel")

local test, expect = h.test, h.expect
local keys_in, panel_keys = h.keys_in, h.panel_keys

test("a rebuilt transcript shows the coding agent's roles", function()
  local t = require("agentls.transcript").new("roles")
  t:load({
    { role = "bashExecution", command = "make", output = "built\n", exitCode = 0, cancelled = false,
      truncated = true, fullOutputPath = "/tmp/make.log", excludeFromContext = true },
    { role = "bashExecution", command = "sleep 9", output = "", cancelled = true, truncated = false },
    { role = "custom", customType = "note", content = "Remember the tests.", display = true },
    { role = "custom", customType = "hidden", content = "Never shown.", display = false },
    { role = "branchSummary", summary = "Tried the other parser.", fromId = "e1" },
    { role = "compactionSummary", summary = "## Goal\nShip it.", tokensBefore = 123456 },
  })
  local text = h.rendered_text(t)
  h.expect_shown(text, {
    "▍$ make  · exit 0 · not sent to the model\n  │ built\n",
    "  … the output was cut; all of it is in /tmp/make.log\n",
    "▍$ sleep 9  · cancelled\n",
    "▍note\n  Remember the tests.\n",
    "▍Branch summary\n  ▸ summary, 1 line: Tried the other parser. (<CR> shows it)\n",
    "▍Compaction · 123,456 tokens before\n  ▸ summary, 2 lines: Ship it. (<CR> shows it)\n",
  })
  expect(not text:find("Never shown", 1, true), "a custom message with display = false is not shown")
end)

test("tool rows show the edit's diff, and <CR> unfolds the arguments and the whole output", function()
  local lines = {}
  for i = 1, 20 do
    lines[i] = "line " .. i
  end
  vim.fn.writefile(lines, env.ws .. "/long.txt")
  h.settled_run({
    h.tool_call("x1", "edit", { path = "long.txt", edits = { { oldText = "line 10\n", newText = "LINE TEN\n" } } }),
    { content = "Changed." },
  }, "change line 10")
  local text = h.panel_text()
  local folded = "edit  long.txt  · done\n    │ Edited long.txt (1 replacement):\n    │ -line 10\n    │ +LINE TEN\n    … "
  expect(text:find(folded, 1, true), "the change itself under the row:\n" .. text)
  panel_keys("edit  long.txt  · done", "<CR>")
  text = h.panel_text()
  expect(text:find("edit  long.txt  · done\n    arguments:\n      edits: [", 1, true), "the arguments:\n" .. text)
  expect(text:find("      path: long.txt\n", 1, true), "the path argument:\n" .. text)
  expect(text:find("    │ @@ ", 1, true) and text:find("    │  line 9\n", 1, true), "the whole diff:\n" .. text)
  panel_keys("edit  long.txt  · done", "<CR>")
  expect(h.panel_text():find(folded, 1, true), "folded again:\n" .. h.panel_text())
  vim.fn.delete(env.ws .. "/long.txt")
end)

test("an unfolded edit shows its blank context lines; a read says its size once; 1 more line", function()
  vim.fn.writefile({ "one", "", "three", "four", "" , "six" }, env.ws .. "/gaps.txt")
  vim.fn.writefile({ "1", "2", "3", "4", "5", "6", "7" }, env.ws .. "/seven.txt")
  local asked = h.stub_select("allowOnce")
  h.settled_run({
    {
      content = {
        { type = "toolCall", id = "g1", name = "edit",
          arguments = { path = "gaps.txt", edits = { { oldText = "three\n", newText = "THREE\n" } } } },
        { type = "toolCall", id = "g2", name = "read", arguments = { path = "seven.txt" } },
        { type = "toolCall", id = "g3", name = "bash", arguments = { command = "seq 6" } },
      },
      stopReason = "toolUse",
    },
    { content = "Done." },
  }, "edit, read, count")
  expect(#asked == 1, "bash asked")
  local text = h.panel_text()
  expect(text:find("read  seven.txt  · done\n    │ 7 lines (<CR> shows them)\n  ✓ bash", 1, true), "the read's size:\n" .. text)
  expect(not text:find("7 more lines", 1, true), "no '7 more lines' after '7 lines':\n" .. text)
  expect(text:find("    │ 6\n    … 1 more line (<CR> shows it)\n", 1, true), "one more line, singular:\n" .. text)
  panel_keys("edit  gaps.txt  · done", "<CR>")
  text = h.panel_text()
  local hunk = text:match("    │ @@[^\n]*\n(.-)\n  ✓ read")
  expect(hunk, "the hunk:\n" .. text)
  local rows = vim.split(hunk, "\n", { plain = true })
  local want = { "    │  one", "    │  ", "    │ -three", "    │ +THREE", "    │  four", "    │  ", "    │  six" }
  expect(vim.deep_equal(rows, want), "every line of the hunk, the blank ones too:\n" .. hunk)
  vim.fn.delete(env.ws .. "/gaps.txt")
  vim.fn.delete(env.ws .. "/seven.txt")
end)

test("the winbars fit at 80 and 160 columns: the least useful parts go first, nothing is cut from the left", function()
  local session = h.settled_run({ { content = "Hi." } }, "hello")
  h.wait(5000, function()
    return require("agentls.state").transcripts[session].stats ~= nil
  end, "the session's figures (agent/getStats)")
  panel.open(false)
  h.at_widths(function(columns)
    local win = panel.windows()[1]
    h.expect_winbar(win, " agentls · ", { "faux-1", "idle" })
    local shown = h.drawn_winbar(win).str
    if columns == 160 then -- a panel of 64 columns
      expect(shown:find(" · faux/faux-1 · Accept edits · ", 1, true), shown)
    end
    vim.cmd("AgentPrompt")
    local prompt_win = require("agentls.prompt").windows()[1]
    h.expect_winbar(prompt_win, " ", { "prompt · ", "<CR> sends", "<M-CR> follow-up" })
    require("agentls.prompt").close()
  end)
end)

test("the panel is markdown; thinking has a label and folds", function()
  h.settled_run({
    {
      content = {
        { type = "thinking", thinking = "Let me think.\nA second thought." },
        { type = "text", text = "Here:\n\n```lua\nprint(1)\n```" },
      },
    },
  }, "show code")
  expect(vim.bo[panel.buf].filetype == "markdown", "filetype " .. vim.bo[panel.buf].filetype)
  local text = h.panel_text()
  expect(text:find("  ▸ Thinking · 2 lines (<CR> shows it)\n", 1, true), "thinking folded:\n" .. text)
  expect(not text:find("A second thought", 1, true), "its text hidden")
  expect(text:find("  ```lua\n  print(1)\n  ```\n", 1, true), "the code fence, as markdown:\n" .. text)
  panel_keys("Thinking · 2 lines", "<CR>")
  text = h.panel_text()
  expect(text:find("  ▾ Thinking (<CR> folds it)\n  Let me think.\n  A second thought.\n", 1, true), text)
end)

test("the panel's width adapts; a reopened panel follows the newest output; ? lists the keys", function()
  expect(panel.split_width(80) == 40, "half of 80 columns: " .. panel.split_width(80))
  expect(panel.split_width(200) == 80, "0.4 of 200 columns: " .. panel.split_width(200))
  local win = panel.windows()[1]
  expect(vim.api.nvim_win_get_width(win) == panel.split_width(), "the split's width " .. vim.api.nvim_win_get_width(win))
  vim.api.nvim_win_set_cursor(win, { 1, 0 })
  panel.close()
  vim.cmd("AgentPanel")
  win = panel.windows()[1]
  local last = vim.api.nvim_buf_line_count(panel.buf)
  expect(vim.api.nvim_win_get_cursor(win)[1] == last, "the cursor at the end")
  h.notes = {}
  keys_in(win, "?")
  local help = panel.help_win
  expect(help and vim.api.nvim_win_get_config(help).relative == "win", "? opens the list of keys in a float")
  local keys = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(help), 0, -1, false), "\n")
  expect(keys:find("  a      allow the tool call waiting for permission, once", 1, true), keys)
  expect(#h.notes == 0, "in a window, not a notification of many lines: " .. vim.inspect(h.notes))
  keys_in(help, "q")
  expect(not vim.api.nvim_win_is_valid(help), "q closes it")
  expect(vim.fn.maparg("<Plug>(agentls-prompt)", "n") ~= "", "<Plug> mappings")
  vim.cmd("wincmd p")
end)

test(":AgentPanel from elsewhere enters the panel, in it stays; q closes it; also as a float", function()
  local config = require("agentls.config")
  for _, other in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if other ~= panel.windows()[1] and vim.api.nvim_win_get_config(other).relative == "" then
      vim.api.nvim_set_current_win(other)
    end
  end
  expect(vim.api.nvim_get_current_win() ~= panel.windows()[1], "the cursor is outside the panel")
  vim.cmd("AgentPanel")
  expect(panel.is_open() and vim.api.nvim_get_current_win() == panel.windows()[1], ":AgentPanel enters the panel")
  vim.cmd("AgentPanel")
  expect(panel.is_open() and vim.api.nvim_get_current_win() == panel.windows()[1], ":AgentPanel in the panel stays")
  keys_in(panel.windows()[1], "q")
  expect(not panel.is_open(), "q in the panel closes it")
  config.options.panel.layout = "float"
  vim.cmd("AgentPanel")
  local win = panel.windows()[1]
  expect(win and vim.api.nvim_win_get_config(win).relative == "editor", "a floating panel")
  expect(vim.api.nvim_get_current_win() == win, ":AgentPanel enters it")
  expect(h.panel_text():find("You\n  show code", 1, true), "showing the session")
  vim.cmd("AgentPanel")
  expect(vim.api.nvim_get_current_win() == win, "and stays in it")
  keys_in(win, "q")
  expect(not panel.is_open(), "closed again")
  config.options.panel.layout = "split"
  panel.open(false)
end)

h.finish()
