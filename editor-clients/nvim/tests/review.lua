-- End-to-end tests of reviews in the Neovim plugin (the permission mode "review"; the server
-- restarts with edit and write in that mode): the diff tab, :AgentAccept, :AgentReject and gr,
-- parallel reviews, a closed tab and :AgentReview, an abort, against the real server on the
-- faux provider. In the suite (run.lua) it runs last: the server stays in that mode.
--
--   nvim --headless --clean -l editor-clients/nvim/tests/review.lua [AGENTLS_EXECUTABLE]
--
-- Alone, or with the other features in one Neovim and one server (run.lua); per-test lines
-- on stdout, "N passed, M failed" last.
local here = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p")))
package.path = here .. "/?.lua;" .. package.path

local h = require("helpers")
local env = h.start()
local client = require("agentls.client")
local panel = require("agentls.panel")
local review = require("agentls.review")
local state = require("agentls.state")

local test, wait, expect = h.test, h.wait, h.expect

--- The review tab's two windows, once it is open: {tab, before = win, after = win}.
local function wait_review_tab(path)
  local found
  wait(10000, function()
    local item = review.queue[1]
    if item and item.view and item.params.path == path then
      found = { tab = item.view.tab, before = item.view.wins[1], after = item.view.wins[2] }
      return true
    end
    return false
  end, "the review tab of " .. path)
  return found
end

local function buffer_text(win)
  return table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false), "\n")
end

test("edit in review mode: a diff tab shows the change; :AgentAccept lands it in the buffer and on disk", function()
  client.stop()
  wait(5000, function()
    return client.get() == nil
  end, "the server stopped")
  local reviewing = { permissions = { edit = "review", write = "review" } }
  require("agentls").setup(vim.tbl_extend("force", h.setup_opts, reviewing))
  expect(client.init_options().permissions.edit == "review", "setup passes the permissions")
  expect(client.capabilities().experimental.agent.reviewEdit == true, "reviewEdit is advertised")
  vim.fn.writefile({ "a = 1", "b = 2" }, env.ws .. "/m.py")
  vim.cmd("silent! %bwipeout!")
  vim.cmd.edit(env.ws .. "/m.py")
  local buf = vim.api.nvim_get_current_buf()
  local tab = vim.api.nvim_get_current_tabpage()
  h.script({
    h.tool_call("v1", "edit", { path = "m.py", edits = { { oldText = "b = 2", newText = "b = 'two'" } } }),
    { content = "Edited." },
  })
  h.new_session()
  local session = state.current
  wait(5000, function()
    return vim.lsp.buf_is_attached(buf, client.id)
  end, "the buffer attached")
  vim.cmd("AgentPrompt edit m.py")
  local shown = wait_review_tab("m.py")
  expect(vim.api.nvim_get_current_tabpage() == shown.tab and shown.tab ~= tab, "the review opened in a tab of its own")
  expect(#vim.api.nvim_tabpage_list_wins(shown.tab) == 2, "two windows")
  local before_buf, after_buf = vim.api.nvim_win_get_buf(shown.before), vim.api.nvim_win_get_buf(shown.after)
  local before_name, after_name = vim.api.nvim_buf_get_name(before_buf), vim.api.nvim_buf_get_name(after_buf)
  expect(before_name == "agentls://review/m.py (before)", before_name)
  expect(after_name == "agentls://review/m.py (after)", after_name)
  expect(buffer_text(shown.before) == "a = 1\nb = 2", "the old text: " .. buffer_text(shown.before))
  expect(buffer_text(shown.after) == "a = 1\nb = 'two'", "the new text: " .. buffer_text(shown.after))
  expect(vim.wo[shown.before].diff and vim.wo[shown.after].diff, "both windows in diff mode")
  expect(vim.bo[before_buf].filetype == "python" and vim.bo[after_buf].filetype == "python", "the file's filetype")
  expect(not vim.bo[before_buf].modifiable and vim.bo[before_buf].buftype == "nofile", "the old text is read-only")
  expect(vim.bo[after_buf].modifiable and vim.bo[after_buf].buftype == "nofile", "the new text may be edited")
  h.at_widths(function(columns)
    h.equalize() -- as the tab's windows are when it opens at this width
    -- the file's name stays; the keys fit a window of 80 columns (the least useful parts go first)
    local keys = columns == 160 and { "ga ", "gr " } or {}
    h.expect_winbar(shown.before, " ", vim.list_extend({ "review · ", "edit m.py (before)" }, keys))
    h.expect_winbar(shown.after, " ", vim.list_extend({ "review · ", "edit m.py (after)" }, keys))
  end)
  h.equalize()
  local winbar = vim.wo[shown.after].winbar
  expect(not winbar:find("more waiting", 1, true), "nothing else waits: " .. winbar)
  expect(vim.fn.maparg("ga", "n", false, true).buffer == 1, "ga is mapped in the review buffer")
  panel.render()
  local text = h.panel_text()
  expect(text:find("edit  m.py  · waiting for your review", 1, true), "the row waits for the review:\n" .. text)
  expect(text:find("review waiting: edit m.py  (:AgentAccept · :AgentReject [reason]", 1, true), text)
  expect(require("agentls").status():find("1 review waiting", 1, true), require("agentls").status())

  vim.cmd("AgentAccept")
  expect(not vim.api.nvim_tabpage_is_valid(shown.tab), "the review tab closed")
  expect(vim.api.nvim_get_current_tabpage() == tab, "back in the user's tab")
  expect(not vim.api.nvim_buf_is_valid(before_buf), "the scratch buffers are wiped")
  expect(not vim.api.nvim_buf_is_valid(after_buf), "the scratch buffers are wiped")
  h.wait_settled(session)
  expect(vim.deep_equal(vim.api.nvim_buf_get_lines(buf, 0, -1, false), { "a = 1", "b = 'two'" }), "the buffer has it")
  expect(not vim.bo[buf].modified, "saved")
  expect(vim.deep_equal(vim.fn.readfile(env.ws .. "/m.py"), { "a = 1", "b = 'two'" }), "the disk has it")
  text = h.panel_text()
  expect(text:find("edit  m.py  · done", 1, true) and not text:find("review waiting", 1, true), text)
  local results = h.tool_results(session)
  expect(results.v1 and not results.v1.error, vim.inspect(results))
end)

test(":AgentReject with a reason: the tool result has it and the file is unchanged; parallel reviews queue", function()
  vim.fn.writefile({ "x = 1" }, env.ws .. "/n.py")
  h.script({
    {
      content = {
        { type = "toolCall", id = "w1", name = "edit",
          arguments = { path = "m.py", edits = { { oldText = "b = 'two'", newText = "b = 'TWO'" } } } },
        { type = "toolCall", id = "w2", name = "write", arguments = { path = "new.py", content = "NEW = 1\n" } },
      },
      stopReason = "toolUse",
    },
    { content = "Understood." },
  })
  h.new_session()
  local session = state.current
  vim.cmd("AgentPrompt change both")
  local first = wait_review_tab("m.py")
  wait(10000, function()
    return #review.queue == 2
  end, "the second review queued")
  local winbar = vim.wo[first.after].winbar
  expect(winbar:find("1 more waiting", 1, true) or winbar:find("+1 waiting", 1, true), "the winbar counts the waiting review: " .. winbar)
  expect(#vim.api.nvim_list_tabpages() == 2, "one review tab at a time")
  panel.render()
  expect(h.panel_text():find("review waiting: edit m.py (+1 more)", 1, true), h.panel_text())

  vim.cmd("AgentReject too risky")
  expect(not vim.api.nvim_tabpage_is_valid(first.tab), "the first review's tab closed")
  local second = wait_review_tab("new.py")
  expect(buffer_text(second.before) == "" and buffer_text(second.after) == "NEW = 1", buffer_text(second.after))
  local name = vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(second.after))
  expect(name == "agentls://review/new.py (after)", name)
  expect(not vim.wo[second.after].winbar:find("more waiting", 1, true), vim.wo[second.after].winbar)
  -- gr asks for a reason
  local asked = h.stub_input("not now")
  vim.api.nvim_feedkeys("gr", "x", false)
  expect(asked[1] and asked[1].prompt:find("new.py", 1, true), "gr asked why: " .. vim.inspect(asked))
  h.wait_settled(session)
  expect(#review.queue == 0 and #vim.api.nvim_list_tabpages() == 1, "no review left")
  local results = h.tool_results(session)
  expect(results.w1 and results.w1.error, vim.inspect(results))
  expect(results.w1.text:find("The user rejected the change to m.py: too risky", 1, true), results.w1.text)
  local rejected = "The user rejected the change to new.py: not now"
  expect(results.w2 and results.w2.text:find(rejected, 1, true), vim.inspect(results))
  expect(vim.deep_equal(vim.fn.readfile(env.ws .. "/m.py"), { "a = 1", "b = 'two'" }), "m.py is unchanged")
  local buf = vim.fn.bufnr(env.ws .. "/m.py")
  expect(vim.deep_equal(vim.api.nvim_buf_get_lines(buf, 0, -1, false), { "a = 1", "b = 'two'" }), "its buffer too")
  expect(vim.fn.filereadable(env.ws .. "/new.py") == 0, "new.py was not written")
  expect(h.panel_text():find("edit  m.py  · failed", 1, true), h.panel_text())
end)

--- Lines "line 1" .. "line N", with `changes` (by line number) replacing some.
local function numbered(n, changes)
  local lines = {}
  for i = 1, n do
    lines[i] = (changes or {})[i] or ("line %d"):format(i)
  end
  return lines
end

--- The virtual texts of the review labels in `buf`, by 0-based row.
local function labels(buf)
  local found = {}
  local ns = vim.api.nvim_get_namespaces()["agentls.review.labels"]
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
    local details = mark[4]
    found[mark[2]] = (details.sign_text or ""):gsub("%s+$", "") .. " " .. details.virt_text[1][1]
  end
  return found
end

test("hunk by hunk: gn rejects the hunk under the cursor, gy takes it back; :AgentAccept lands the hunks kept", function()
  vim.fn.writefile(numbered(20), env.ws .. "/h.txt")
  h.script({
    h.tool_call("k1", "edit", { path = "h.txt", edits = {
      { oldText = "line 2\n", newText = "line TWO\n" },
      { oldText = "line 19\n", newText = "line NINETEEN\n" },
    } }),
    { content = "Edited." },
  })
  h.new_session()
  local session = state.current
  vim.cmd("AgentPrompt edit h.txt")
  local shown = wait_review_tab("h.txt")
  local item = review.queue[1]
  expect(#item.params.hunks == 2 and #item.hunks == 2, "two hunks: " .. vim.inspect(item.params.hunks))
  local after_buf = vim.api.nvim_win_get_buf(shown.after)
  local before_buf = vim.api.nvim_win_get_buf(shown.before)
  local marks = labels(after_buf)
  expect(marks[1] == "✓ hunk 1/2 accepted · gn rejects it", vim.inspect(marks))
  expect(marks[18] == "✓ hunk 2/2 accepted · gn rejects it", vim.inspect(marks))
  expect(labels(before_buf)[18] == "✓ hunk 2/2 accepted", vim.inspect(labels(before_buf)))
  h.resize(160)
  h.equalize()
  h.expect_winbar(shown.after, " ", { "gy/gn hunk" })
  expect(vim.fn.maparg("gn", "n", false, true).buffer == 1, "gn is mapped in the review buffer")
  -- the cursor in the context of hunk 2, then gn: its old line is back in the after side
  vim.api.nvim_set_current_win(shown.after)
  vim.api.nvim_win_set_cursor(shown.after, { 17, 0 })
  h.keys_in(shown.after, "gn")
  expect(vim.deep_equal(vim.api.nvim_buf_get_lines(after_buf, 0, -1, false), numbered(20, { [2] = "line TWO" })),
    "the after side without hunk 2: " .. buffer_text(shown.after))
  expect(labels(after_buf)[18] == "✗ hunk 2/2 rejected · gy accepts it", vim.inspect(labels(after_buf)))
  expect(vim.deep_equal(review.answer_of(item), { outcome = "accept", hunks = { 0 } }), vim.inspect(review.answer_of(item)))
  -- gy takes it back; :AgentRejectHunk with the cursor on hunk 1 in the before window
  h.keys_in(shown.after, "gy")
  expect(labels(after_buf)[18] == "✓ hunk 2/2 accepted · gn rejects it", vim.inspect(labels(after_buf)))
  expect(vim.deep_equal(review.answer_of(item), { outcome = "accept" }), vim.inspect(review.answer_of(item)))
  vim.api.nvim_set_current_win(shown.before)
  vim.api.nvim_win_set_cursor(shown.before, { 2, 0 })
  vim.cmd("AgentRejectHunk")
  vim.api.nvim_win_set_cursor(shown.after, { 10, 0 })
  vim.api.nvim_set_current_win(shown.after)
  h.notes = {}
  vim.cmd("AgentAcceptHunk")
  expect(h.noted("no hunk under the cursor", vim.log.levels.WARN), "line 10 is in no hunk")
  expect(vim.deep_equal(review.answer_of(item), { outcome = "accept", hunks = { 1 } }), vim.inspect(review.answer_of(item)))
  vim.cmd("AgentAccept")
  h.wait_settled(session)
  expect(vim.deep_equal(vim.fn.readfile(env.ws .. "/h.txt"), numbered(20, { [19] = "line NINETEEN" })),
    "only hunk 2 landed: " .. table.concat(vim.fn.readfile(env.ws .. "/h.txt"), "|"))
  local result = h.tool_results(session).k1
  expect(result and not result.error, vim.inspect(result))
  expect(result.text:find("accepted hunk 2 of 2", 1, true) and result.text:find("rejected hunk 1", 1, true), result.text)
end)

test("the after side edited by the user: :AgentAccept lands the user's text; all hunks rejected: a rejection", function()
  h.script({
    h.tool_call("u1", "edit", { path = "h.txt", edits = { { oldText = "line 5\n", newText = "line FIVE\n" } } }),
    h.tool_call("u2", "edit", { path = "h.txt", edits = { { oldText = "line 7\n", newText = "line SEVEN\n" } } }),
    { content = "Edited." },
  })
  h.new_session()
  local session = state.current
  vim.cmd("AgentPrompt edit h.txt twice")
  local shown = wait_review_tab("h.txt")
  local after_buf = vim.api.nvim_win_get_buf(shown.after)
  vim.api.nvim_buf_set_lines(after_buf, 4, 5, false, { "line five, as the user wants it" })
  vim.api.nvim_exec_autocmds("TextChanged", { buffer = after_buf })
  expect(labels(after_buf)[4] == "~ hunk 1/1 edited · gy takes the proposal, gn the old lines", vim.inspect(labels(after_buf)))
  vim.cmd("AgentAccept")
  shown = wait_review_tab("h.txt")
  expect(buffer_text(shown.after):find("line SEVEN", 1, true), buffer_text(shown.after))
  vim.api.nvim_set_current_win(shown.after)
  vim.api.nvim_win_set_cursor(shown.after, { 7, 0 })
  vim.cmd("AgentRejectHunk")
  expect(vim.deep_equal(review.answer_of(review.queue[1]), { outcome = "reject" }), vim.inspect(review.answer_of(review.queue[1])))
  vim.cmd("AgentAccept")
  h.wait_settled(session)
  local expected = numbered(20, { [5] = "line five, as the user wants it", [19] = "line NINETEEN" })
  expect(vim.deep_equal(vim.fn.readfile(env.ws .. "/h.txt"), expected), table.concat(vim.fn.readfile(env.ws .. "/h.txt"), "|"))
  local results = h.tool_results(session)
  expect(results.u1.text:find("The user edited the change to h.txt before accepting it", 1, true), results.u1.text)
  expect(results.u2.error, vim.inspect(results.u2))
end)

test("a closed review tab keeps the review (:AgentReview); an abort closes it, answering nothing", function()
  h.script({
    h.tool_call("x1", "edit", { path = "m.py", edits = { { oldText = "a = 1", newText = "a = 100" } } }),
    { content = "never" },
  })
  h.new_session()
  local session = state.current
  vim.cmd("AgentPrompt edit again")
  local shown = wait_review_tab("m.py")
  local item = review.queue[1]
  -- closing the tab keeps the review waiting (and what the user typed in the after side);
  -- :AgentReview shows it again
  vim.api.nvim_buf_set_lines(vim.api.nvim_win_get_buf(shown.after), 1, 2, false, { "b = 'typed'" })
  h.notes = {}
  vim.cmd("tabclose")
  wait(2000, function()
    return h.noted("the review of m.py still waits", vim.log.levels.WARN)
  end, "the warning that the review still waits")
  expect(#review.queue == 1 and not item.view and not item.done, "still waiting, not answered")
  vim.cmd("AgentReview")
  shown = wait_review_tab("m.py")
  expect(vim.api.nvim_get_current_tabpage() == shown.tab, "shown again")
  expect(buffer_text(shown.after) == "a = 100\nb = 'typed'", "the after side as it was left: " .. buffer_text(shown.after))
  local cancelled = review.cancelled or 0
  vim.cmd("AgentAbort")
  wait(5000, function()
    return not vim.api.nvim_tabpage_is_valid(shown.tab)
  end, "the review tab closed")
  local settled = h.wait_settled(session)
  expect(settled.stopReason == "aborted", "the run was aborted: " .. tostring(settled.stopReason))
  expect(#review.queue == 0 and item.done and coroutine.status(item.co) == "suspended", "dropped, never answered")
  expect((review.cancelled or 0) == cancelled + 1, "the server cancelled the request (one $/cancelRequest)")
  expect(vim.deep_equal(vim.fn.readfile(env.ws .. "/m.py"), { "a = 1", "b = 'two'" }), "m.py is unchanged")
  vim.cmd("AgentAccept")
  expect(h.noted("no review to accept", vim.log.levels.WARN), "nothing left to accept")
end)

h.finish()
