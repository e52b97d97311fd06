-- End-to-end tests of :AgentChanges in the Neovim plugin: a run whose bash edits with sed -i,
-- removes, renames and creates files; the quickfix list of its files and hunks, the diff tab,
-- a hunk reverted in an open buffer, whole files reverted on disk, a conflict asked about and
-- then forced, against the real server on the faux provider.
--
--   nvim --headless --clean -l editor-clients/nvim/tests/changes.lua [AGENTLS_EXECUTABLE]
--
-- Alone, or with the other features in one Neovim and one server (run.lua); per-test lines
-- on stdout, "N passed, M failed" last.
local here = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p")))
package.path = here .. "/?.lua;" .. package.path

local h = require("helpers")
local env = h.start()
local changes = require("agentls.changes")
local state = require("agentls.state")

local test, wait, expect = h.test, h.wait, h.expect

--- Lines "line 1" .. "line N", with `changes` (by line number) replacing some.
local function numbered(n, replaced)
  local lines = {}
  for i = 1, n do
    lines[i] = (replaced or {})[i] or ("line %d"):format(i)
  end
  return lines
end

--- The current quickfix list, once it is one of :AgentChanges with `count` items: its items'
--- "file|lnum|text".
local function wait_list(count, what)
  local rows
  wait(10000, function()
    local info = vim.fn.getqflist({ id = 0, items = 0, title = 0 })
    if not changes.lists[info.id] or #info.items ~= count then
      return false
    end
    rows = vim.tbl_map(function(item)
      return ("%s|%d|%s"):format(vim.fn.fnamemodify(vim.fn.bufname(item.bufnr), ":t"), item.lnum, item.text)
    end, info.items)
    return true
  end, what)
  return rows
end

--- Wait for `AgentlsChanges` after `action()` (the list read again).
local function refreshed(action)
  local seen = false
  local id = vim.api.nvim_create_autocmd("User", { pattern = "AgentlsChanges", once = true, callback = function()
    seen = true
  end })
  action()
  wait(10000, function()
    return seen
  end, "the list read again")
  pcall(vim.api.nvim_del_autocmd, id)
end

--- The quickfix window, its cursor on the item whose text contains `text`; then `keys` in it.
local function keys_on(text, keys)
  local win = vim.fn.getqflist({ winid = 0 }).winid
  expect(win ~= 0, "the quickfix window is open")
  local items = vim.fn.getqflist()
  for i, item in ipairs(items) do
    if vim.fn.bufname(item.bufnr):find(text, 1, true) or item.text:find(text, 1, true) then
      vim.api.nvim_set_current_win(win)
      vim.api.nvim_win_set_cursor(win, { i, 0 })
      return h.keys_in(win, keys)
    end
  end
  error("no item with " .. text)
end

local session

test("a run whose bash runs sed -i, rm, mv and creates a file: :AgentChanges lists each file and hunk", function()
  h.without_session()
  vim.cmd("silent! %bwipeout!")
  vim.fn.writefile(numbered(20), env.ws .. "/two.txt")
  vim.fn.writefile({ "bye" }, env.ws .. "/gone.txt")
  vim.fn.writefile({ "moving" }, env.ws .. "/old.txt")
  local command = "sed -i 's/^line 2$/line TWO/; s/^line 19$/line NINETEEN/' two.txt && rm gone.txt"
    .. " && mv old.txt moved.txt && printf 'fresh\\n' > new.txt"
  h.stub_select("allowOnce") -- bash asks in the default preset
  session = h.settled_run({ h.tool_call("b1", "bash", { command = command }), { content = "Done." } }, "change files")
  expect(vim.fn.filereadable(env.ws .. "/new.txt") == 1 and vim.fn.filereadable(env.ws .. "/gone.txt") == 0, "ran")
  vim.cmd("AgentChanges")
  local rows = wait_list(5, "the list of the run's changes")
  local expected = {
    "gone.txt|1|deleted [bash] hunk 1/1 @@ -1 +0,0 @@",
    "moved.txt|1|renamed from old.txt [bash]",
    "new.txt|1|added [bash] hunk 1/1 @@ -0,0 +1 @@",
    "two.txt|1|modified [bash] hunk 1/2 @@ -1,5 +1,5 @@",
    "two.txt|16|modified [bash] hunk 2/2 @@ -16,5 +16,5 @@",
  }
  expect(vim.deep_equal(rows, expected), vim.inspect(rows))
  local info = vim.fn.getqflist({ title = 0, winid = 0 })
  expect(info.title:find("agentls changes: the last run of session " .. session:sub(1, 8), 1, true), info.title)
  expect(info.winid ~= 0 and vim.api.nvim_get_current_win() == info.winid, "the quickfix window is open and current")
  expect(vim.fn.maparg("r", "n", false, true).buffer == 1, "r is mapped in the quickfix window")
  -- all: the whole session, the same files here
  vim.cmd("AgentChanges all")
  wait(10000, function()
    local title = vim.fn.getqflist({ title = 0 }).title
    return title:find("the whole session", 1, true) ~= nil
  end, "the list of the whole session")
  expect(#vim.fn.getqflist() == 5, vim.inspect(vim.fn.getqflist()))
  vim.cmd("silent colder")
end)

test("d opens the diff tab: the old text beside the file, in diff mode", function()
  local tabs = #vim.api.nvim_list_tabpages()
  keys_on("hunk 2/2", "d")
  wait(10000, function()
    return #vim.api.nvim_list_tabpages() == tabs + 1
  end, "the diff tab")
  local wins = vim.api.nvim_tabpage_list_wins(0)
  expect(#wins == 2, "two windows")
  local left, right = vim.api.nvim_win_get_buf(wins[1]), vim.api.nvim_win_get_buf(wins[2])
  expect(vim.api.nvim_buf_get_name(left) == "agentls://changes/two.txt (before)", vim.api.nvim_buf_get_name(left))
  expect(vim.api.nvim_buf_get_name(right) == env.ws .. "/two.txt", vim.api.nvim_buf_get_name(right))
  expect(vim.deep_equal(vim.api.nvim_buf_get_lines(left, 0, -1, false), numbered(20)), "the old text")
  expect(vim.wo[wins[1]].diff and vim.wo[wins[2]].diff, "diff mode")
  expect(vim.api.nvim_get_current_win() == wins[2] and vim.api.nvim_win_get_cursor(wins[2])[1] == 16, "at the hunk")
  h.keys_in(wins[1], "q")
  expect(#vim.api.nvim_list_tabpages() == tabs, "q closed the tab")
end)

test("r reverts one hunk of two in the open buffer; R reverts whole files on disk; the list follows", function()
  local buf = vim.fn.bufnr(env.ws .. "/two.txt")
  expect(buf > 0 and vim.api.nvim_buf_is_loaded(buf), "two.txt is open (the diff tab loaded it)")
  wait(5000, function()
    return vim.lsp.buf_is_attached(buf, require("agentls.client").id)
  end, "the buffer attached")
  refreshed(function()
    keys_on("hunk 2/2", "r")
  end)
  local rows = wait_list(4, "the list without the hunk reverted")
  -- the run's span goes on to the next run: the user's revert is part of its net change
  expect(rows[4] == "two.txt|1|modified [bash, user] hunk 1/1 @@ -1,5 +1,5 @@", vim.inspect(rows))
  expect(h.noted("reverted two.txt (hunk 2)"), vim.inspect(h.notes[#h.notes]))
  local after = numbered(20, { [2] = "line TWO" })
  expect(vim.deep_equal(vim.api.nvim_buf_get_lines(buf, 0, -1, false), after), "the buffer has hunk 2 taken back")
  wait(5000, function()
    return vim.deep_equal(vim.fn.readfile(env.ws .. "/two.txt"), after)
  end, "the disk too (saved)")
  -- :AgentChangesDiff in the file's buffer: its diff tab, at the cursor's line
  local tabs = #vim.api.nvim_list_tabpages()
  vim.cmd("tab sbuffer " .. buf)
  vim.api.nvim_win_set_cursor(0, { 3, 0 })
  vim.cmd("AgentChangesDiff")
  wait(10000, function()
    return #vim.api.nvim_list_tabpages() == tabs + 2
  end, "the diff tab of the current buffer")
  local before = vim.api.nvim_win_get_buf(vim.api.nvim_tabpage_list_wins(0)[1])
  expect(vim.deep_equal(vim.api.nvim_buf_get_lines(before, 0, -1, false), numbered(20)), "the text before the run")
  expect(vim.api.nvim_win_get_cursor(0)[1] == 3, "at the cursor's line")
  vim.cmd("tabclose | tabclose")
  -- R on new.txt (not open): deleted on disk; on gone.txt: back
  refreshed(function()
    keys_on("new.txt", "R")
  end)
  wait_list(3, "new.txt gone from the list")
  expect(vim.fn.filereadable(env.ws .. "/new.txt") == 0, "new.txt deleted")
  refreshed(function()
    keys_on("gone.txt", "R")
  end)
  rows = wait_list(2, "gone.txt gone from the list")
  expect(vim.deep_equal(vim.fn.readfile(env.ws .. "/gone.txt"), { "bye" }), "gone.txt is back")
  expect(rows[1]:find("moved.txt", 1, true) and rows[2]:find("two.txt", 1, true), vim.inspect(rows))
end)

test("a file changed since: R asks, and force leaves it as the user made it, its rename not undone half", function()
  vim.fn.writefile({ "moving", "and changed by the user" }, env.ws .. "/moved.txt")
  local asked = h.stub_select("force")
  h.notes = {}
  refreshed(function()
    keys_on("moved.txt", "R")
    wait(10000, function()
      return #asked == 1
    end, "the conflict question")
  end)
  expect(asked[1].prompt:find("moved.txt, old.txt changed since the agent's change", 1, true), asked[1].prompt)
  expect(h.noted("skipped moved.txt", vim.log.levels.WARN), vim.inspect(h.notes))
  expect(vim.deep_equal(vim.fn.readfile(env.ws .. "/moved.txt"), { "moving", "and changed by the user" }), "kept")
  -- a rename is undone whole or not at all: old.txt goes back only with moved.txt
  expect(h.noted("old.txt: it goes back with moved.txt (a rename)", vim.log.levels.WARN), vim.inspect(h.notes))
  expect(vim.fn.filereadable(env.ws .. "/old.txt") == 0, "old.txt is not back beside moved.txt")
  -- cancelled: nothing is sent again
  asked = h.stub_select("cancel")
  keys_on("moved.txt", "R")
  wait(10000, function()
    return #asked == 1
  end, "asked again")
  vim.cmd("cclose")
  expect(#h.stored_messages(session) > 0, "the session is still there")
end)

h.finish()
