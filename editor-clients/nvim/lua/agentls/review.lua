--- `agent/reviewEdit`: show the agent's change of a file as a diff, before it lands.
---
--- The server sends the whole file before and after the change (the permission mode
--- `review` of `write` and `edit`). The review opens in a tab of its own: two scratch
--- buffers, `agentls://review/PATH (before)` and `(after)`, in diff mode. `:AgentAccept`
--- or `:AgentReject [reason]` (in the tab also `ga` and `gr`) answer it and close the tab.
---
--- Hunk by hunk: the params carry the change's `hunks` (indexes the answer names, 0-based).
--- `:AgentRejectHunk` (`gn`) puts the old lines of the hunk under the cursor back into the
--- "after" buffer, `:AgentAcceptHunk` (`gy`) its new lines again; each hunk is labelled
--- (sign and virtual text) accepted, rejected or edited, from what the buffer holds. The
--- "after" buffer is editable. So what the buffer shows is what lands: at :AgentAccept the
--- answer is `{outcome = "accept"}` when it is the proposal, `{outcome = "accept", hunks}`
--- when it is the proposal with some hunks taken back (`reject` when all are), and
--- `{outcome = "accept", text}` when the user edited it otherwise.
---
--- Neovim runs server→client request handlers in a coroutine: the handler yields until
--- the user answers, and the answer goes back as the request's result. Reviews of parallel
--- tool calls queue up and show one at a time; the winbar says how many wait.
---
--- A review whose call has ended without an answer (the server cancelled the request on an
--- abort: `$/cancelRequest`, then the call's `tool_execution_end`; or the run settled, or
--- the server stopped) is dropped: its tab closes and nothing is answered. Neovim does not
--- give request handlers the request's id, so the cancellation is matched by the call's
--- end, which the server sends right after it.
local api = vim.api
local M = {}

---@class agentls.Review
---@field id integer
---@field params table the agent/reviewEdit params
---@field co thread the request handler's coroutine, resumed with the answer
---@field view {tab: integer, bufs: integer[], wins: integer[], return_tab: integer?}?
---@field hunks agentls.ReviewHunk[]? the change's hunks, as regions of the texts
---@field draft {lines: string[], regions: integer[][]}? the "after" buffer kept when its tab closed

---@class agentls.ReviewHunk
---@field old_row integer where the changed lines start in the old text (0-based)
---@field new_row integer where they start in the new text (0-based)
---@field old string[] the hunk's lines from its first change to its last, old side
---@field new string[] the same, new side
---@field header string "@@ -a,b +c,d @@"
---@field mark integer? its extmark in the "after" buffer (the region the user may change)

---@type agentls.Review[] the waiting reviews, in arrival order; the first one is shown
M.queue = {}
local next_id = 0
local augroup = api.nvim_create_augroup("agentls.review", { clear = true })
M.ns = api.nvim_create_namespace("agentls.review")
local label_ns = api.nvim_create_namespace("agentls.review.labels")

local notify = require("agentls.util").notify

local function key(session_id, tool_call_id)
  return tostring(session_id) .. "\0" .. tostring(tool_call_id)
end

--- The transcript's tool row: waiting for the review, or not any more.
local function mark(item, reviewing)
  local state = require("agentls.state")
  local t = state.transcripts[item.params.sessionId]
  if t then
    t:set_tool_reviewing(item.params.toolCallId, reviewing)
  end
  state.changed(item.params.sessionId)
end

--- The path shown for a review: the server's workspace-relative `path`, else the URI's file.
local function display_path(params)
  if type(params.path) == "string" and params.path ~= "" then
    return params.path
  end
  local ok, fname = pcall(vim.uri_to_fname, params.uri or "")
  return ok and vim.fn.fnamemodify(fname, ":.") or tostring(params.uri)
end

local function lines_of(text)
  if type(text) ~= "string" or text == "" then
    return {}
  end
  text = text:gsub("\r\n", "\n")
  local lines = vim.split(text, "\n", { plain = true })
  if lines[#lines] == "" then
    lines[#lines] = nil -- the file's final newline
  end
  return lines
end

--- The filetype of the reviewed file: its loaded buffer's, else detected from the name.
local function filetype_of(params)
  local bufnr = params.uri and require("agentls.edits").loaded_buffer(params.uri)
  if bufnr and vim.bo[bufnr].filetype ~= "" then
    return vim.bo[bufnr].filetype
  end
  local ok, fname = pcall(vim.uri_to_fname, params.uri or "")
  local ok_match, ft = pcall(vim.filetype.match, { filename = ok and fname or display_path(params) })
  return ok_match and ft or nil
end

--- The winbar of a review window, fitted to `width` columns: what it shows (the file name
--- stays), the keys (shortened first), and how many more wait.
function M.winbar(item, side, width)
  local params = item.params
  local parts = {
    { text = " agentls review", short = " review", group = "AgentlsWinbar", keep = 85, short_keep = 50,
      required = true },
    { text = ("%s %s (%s)"):format(params.toolName or "edit", display_path(params), side), keep = 100,
      required = true },
    { text = "ga / :AgentAccept accept", keep = 80, short = "ga accept", short_keep = 70 },
    { text = "gr / :AgentReject reject", keep = 80, short = "gr reject", short_keep = 70 },
    { text = "]c next change", keep = 30 },
  }
  if item.hunks and #item.hunks > 0 then
    local hunk_keys = { text = "gy / gn accept / reject the hunk", keep = 82, short = "gy/gn hunk", short_keep = 75 }
    table.insert(parts, 5, hunk_keys)
  end
  local more = #M.queue - 1
  if more > 0 then
    local text, short = ("%d more waiting"):format(more), ("+%d waiting"):format(more)
    parts[#parts + 1] = { text = text, short = short, group = "AgentlsToolAsking", keep = 95, required = true }
  end
  return require("agentls.winbar").fit(parts, width)
end

--- The review windows' winbars (again after a resize: WinResized).
function M.refresh_winbars()
  local item = M.queue[1]
  local view = item and item.view
  if not view then
    return
  end
  for i, win in ipairs(view.wins) do
    if api.nvim_win_is_valid(win) then
      vim.wo[win].winbar = M.winbar(item, i == 1 and "before" or "after", api.nvim_win_get_width(win))
    end
  end
end

--- A review buffer named `name` with `lines`; the "after" one (`editable`) may be changed.
local function scratch(name, lines, filetype, editable)
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  if not pcall(api.nvim_buf_set_name, buf, name) then
    local n = 2
    while not pcall(api.nvim_buf_set_name, buf, ("%s <%d>"):format(name, n)) do
      n = n + 1
    end
  end
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = editable == true
  vim.bo[buf].modified = false
  if filetype and filetype ~= "" then
    vim.bo[buf].filetype = filetype
  end
  local function map(lhs, fn, desc)
    vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, desc = "agentls: " .. desc })
  end
  map("ga", function()
    M.accept()
  end, "accept the change (as the after side shows it)")
  map("gr", function()
    M.reject_asking()
  end, "reject the change (asks for a reason)")
  map("gy", function()
    M.accept_hunk()
  end, "accept the hunk under the cursor")
  map("gn", function()
    M.reject_hunk()
  end, "reject the hunk under the cursor")
  return buf
end

-- hunk by hunk ----------------------------------------------------------------------------

--- The review's hunks (from the params' `hunks`), as regions of the old and new text.
local function review_hunks(params)
  local hunks = {}
  for _, hunk in ipairs(type(params.hunks) == "table" and params.hunks or {}) do
    local ok, region = pcall(require("agentls.hunks").region, hunk)
    if not ok then
      return nil -- not in the protocol's shape: reviewed as a whole
    end
    region.header = require("agentls.hunks").header(hunk)
    hunks[#hunks + 1] = region
  end
  return hunks
end

--- Where hunk `hunk` is in the "after" buffer `buf` now: its start and end rows (end exclusive).
local function region_of(buf, hunk)
  local mark = api.nvim_buf_get_extmark_by_id(buf, M.ns, hunk.mark, { details = true })
  local start = mark[1] or hunk.new_row
  return start, math.max(start, mark[3] and mark[3].end_row or start)
end

--- Hunk `hunk`'s region in `buf`: `count` lines from `row` (text typed at its start is in it).
local function set_region(buf, hunk, row, count)
  local last = api.nvim_buf_line_count(buf)
  row = math.min(row, last)
  hunk.mark = api.nvim_buf_set_extmark(buf, M.ns, row, 0, {
    id = hunk.mark,
    end_row = math.min(row + count, last),
    end_col = 0,
    right_gravity = false,
    end_right_gravity = false,
  })
end

--- The "after" side as it is now: its lines and the rows of each hunk's region ({start, end}).
local function after_state(item)
  local view = item.view
  if view and api.nvim_buf_is_valid(view.bufs[2]) then
    local buf = view.bufs[2]
    local regions = {}
    for i, hunk in ipairs(item.hunks or {}) do
      regions[i] = { region_of(buf, hunk) }
    end
    return api.nvim_buf_get_lines(buf, 0, -1, false), regions
  end
  if item.draft then
    return item.draft.lines, item.draft.regions
  end
end

--- The state of each hunk from the "after" side's text: "accepted" (its new lines), "rejected"
--- (its old lines) or "edited".
local function hunk_states(item, lines, regions)
  local states = {}
  for i, hunk in ipairs(item.hunks or {}) do
    local now = vim.list_slice(lines, regions[i][1] + 1, regions[i][2])
    states[i] = vim.deep_equal(now, hunk.new) and "accepted" or vim.deep_equal(now, hunk.old) and "rejected"
      or "edited"
  end
  return states
end

local LABELS = {
  accepted = { sign = "✓", group = "AgentlsHunkAccepted", hint = "gn rejects it" },
  rejected = { sign = "✗", group = "AgentlsHunkRejected", hint = "gy accepts it" },
  edited = { sign = "~", group = "AgentlsHunkEdited", hint = "gy takes the proposal, gn the old lines" },
}

--- The sign and virtual text of each hunk, on both sides.
function M.refresh_labels(item)
  local view = item and item.view
  if not (view and item.hunks and #item.hunks > 0) then
    return
  end
  local before, after = view.bufs[1], view.bufs[2]
  if not (api.nvim_buf_is_valid(before) and api.nvim_buf_is_valid(after)) then
    return
  end
  local lines, regions = after_state(item)
  local states = hunk_states(item, lines, regions)
  local function label(buf, row, i, with_hint)
    local count = api.nvim_buf_line_count(buf)
    local l = LABELS[states[i]]
    local text = ("hunk %d/%d %s"):format(i, #item.hunks, states[i])
    api.nvim_buf_set_extmark(buf, label_ns, math.max(0, math.min(row, count - 1)), 0, {
      sign_text = l.sign,
      sign_hl_group = l.group,
      virt_text = { { with_hint and (text .. " · " .. l.hint) or text, l.group } },
      virt_text_pos = "eol",
    })
  end
  api.nvim_buf_clear_namespace(before, label_ns, 0, -1)
  api.nvim_buf_clear_namespace(after, label_ns, 0, -1)
  for i, hunk in ipairs(item.hunks) do
    label(before, hunk.old_row, i, false)
    label(after, regions[i][1], i, true)
  end
end

--- The hunk under the cursor (in either window of the tab; the "after" one's cursor when
--- the current window is elsewhere): its index, or nil when no hunk is within its context.
local function hunk_at(item)
  local view = item.view
  local win, old_side = api.nvim_get_current_win(), false
  if win == view.wins[1] and api.nvim_win_is_valid(win) then
    old_side = true
  elseif win ~= view.wins[2] then
    win = view.wins[2]
  end
  if not api.nvim_win_is_valid(win) then
    return nil
  end
  local row = api.nvim_win_get_cursor(win)[1] - 1
  local _, regions = after_state(item)
  local best, nearest
  for i, hunk in ipairs(item.hunks) do
    local start, stop = regions[i][1], regions[i][2]
    if old_side then
      start, stop = hunk.old_row, hunk.old_row + #hunk.old
    end
    local distance = row < start and start - row or (row >= stop and row - stop + 1 or 0)
    if distance <= 3 and (not nearest or distance < nearest) then -- 3: the hunk's lines of context
      best, nearest = i, distance
    end
  end
  return best
end

--- The hunk under the cursor takes its `side` ("new": accepted, "old": rejected) in the
--- "after" buffer.
local function set_hunk(side)
  local item = M.queue[1]
  local what = side == "new" and "accept" or "reject"
  if not item then
    return notify(("no hunk to %s: no review is waiting"):format(what), vim.log.levels.WARN)
  end
  if not item.view then
    return notify("the review's tab is closed: :AgentReview shows it", vim.log.levels.WARN)
  end
  if not item.hunks or #item.hunks == 0 then
    return notify("this review has no hunks: accept or reject the whole change", vim.log.levels.WARN)
  end
  local i = hunk_at(item)
  if not i then
    return notify(("no hunk under the cursor to %s: ]c goes to the next change"):format(what), vim.log.levels.WARN)
  end
  local buf = item.view.bufs[2]
  local hunk = item.hunks[i]
  local _, regions = after_state(item)
  local start, stop = regions[i][1], regions[i][2]
  local last = api.nvim_buf_line_count(buf)
  start, stop = math.min(start, last), math.min(stop, last)
  local lines = hunk[side]
  if #lines == 0 and start == 0 and stop == last then
    lines = { "" } -- a buffer has a line at least
  end
  api.nvim_buf_set_lines(buf, start, stop, false, lines)
  set_region(buf, hunk, start, #hunk[side])
  for _, win in ipairs(item.view.wins) do
    if api.nvim_win_is_valid(win) then
      api.nvim_win_call(win, function()
        vim.cmd("diffupdate")
      end)
      break
    end
  end
  M.refresh_labels(item)
end

--- :AgentRejectHunk (`gn`): the hunk under the cursor does not land (its old lines come back
--- in the "after" buffer).
function M.reject_hunk()
  set_hunk("old")
end

--- :AgentAcceptHunk (`gy`): the hunk under the cursor lands (its new lines again).
function M.accept_hunk()
  set_hunk("new")
end

--- The "after" side's `lines` as the file's text: the proposal's line ends and final newline.
local function text_of(lines, params)
  local new = type(params.newText) == "string" and params.newText or ""
  local eol = new:find("\r\n", 1, true) and "\r\n" or "\n"
  local final = new == "" and (params.oldText or ""):sub(-1) == "\n" or new:sub(-1) == "\n"
  if #lines == 0 or (#lines == 1 and lines[1] == "") then
    return ""
  end
  return table.concat(lines, eol) .. (final and eol or "")
end

--- The answer :AgentAccept gives, from what the "after" side shows: the whole proposal
--- (`accept`), the proposal with some hunks taken back (`accept` with the `hunks` kept, 0-based;
--- `reject` when none is), or an edited text (`accept` with `text`).
function M.answer_of(item)
  local lines, regions = after_state(item)
  local proposal = lines_of(item.params.newText)
  local function same(a, b) -- a buffer's only empty line is an empty text
    local function empty(x)
      return #x == 0 or (#x == 1 and x[1] == "")
    end
    return vim.deep_equal(a, b) or (empty(a) and empty(b))
  end
  if not lines or same(lines, proposal) then
    return { outcome = "accept" }
  end
  local hunks = item.hunks or {}
  if #hunks > 0 then
    local states = hunk_states(item, lines, regions)
    local expected, kept = proposal, {}
    for i = #hunks, 1, -1 do
      if states[i] == "rejected" then
        expected = require("agentls.hunks").replaced(expected, hunks[i].new_row, #hunks[i].new, hunks[i].old)
      else
        table.insert(kept, 1, i - 1)
      end
    end
    if same(lines, expected) then
      if #kept == 0 then
        return { outcome = "reject" }
      end
      return { outcome = "accept", hunks = kept }
    end
  end
  return { outcome = "accept", text = text_of(lines, item.params) }
end

--- Keep the "after" side of a review whose tab closes unanswered, for when it shows again.
local function keep_draft(item)
  local lines, regions = after_state(item)
  if lines then
    item.draft = { lines = lines, regions = regions }
  end
end

--- Close a review's tab (if it is still open) and go back to the tab the user was in.
local function close_view(item)
  local view = item.view
  if not view then
    return
  end
  if not item.done then
    keep_draft(item)
  end
  item.view = nil
  local was_current = api.nvim_tabpage_is_valid(view.tab) and api.nvim_get_current_tabpage() == view.tab
  if api.nvim_tabpage_is_valid(view.tab) then
    if #api.nvim_list_tabpages() == 1 then
      vim.cmd("tabnew") -- the last tab cannot be closed: leave an empty one
    end
    pcall(vim.cmd, "tabclose! " .. api.nvim_tabpage_get_number(view.tab))
  end
  for _, buf in ipairs(view.bufs) do
    if api.nvim_buf_is_valid(buf) then
      pcall(api.nvim_buf_delete, buf, { force = true })
    end
  end
  if was_current and view.return_tab and api.nvim_tabpage_is_valid(view.return_tab) then
    api.nvim_set_current_tabpage(view.return_tab)
  end
end

--- Open the review's diff tab (the "after" side as the user left it, when the tab was closed).
local function open_view(item)
  local params = item.params
  local path = display_path(params)
  local filetype = filetype_of(params)
  local return_tab = api.nvim_get_current_tabpage()
  if item.hunks == nil then
    item.hunks = review_hunks(params) or {}
  end
  local draft = item.draft
  item.draft = nil
  local before = scratch(("agentls://review/%s (before)"):format(path), lines_of(params.oldText), filetype)
  local after_lines = draft and draft.lines or lines_of(params.newText)
  local after = scratch(("agentls://review/%s (after)"):format(path), after_lines, filetype, true)
  for i, hunk in ipairs(item.hunks) do
    hunk.mark = nil
    local region = draft and draft.regions[i]
    set_region(after, hunk, region and region[1] or hunk.new_row,
      region and region[2] - region[1] or #hunk.new)
  end
  vim.cmd("tab sbuffer " .. before)
  local tab = api.nvim_get_current_tabpage()
  local left = api.nvim_get_current_win()
  vim.cmd("rightbelow vertical sbuffer " .. after)
  local right = api.nvim_get_current_win()
  item.view = { tab = tab, bufs = { before, after }, wins = { left, right }, return_tab = return_tab }
  for _, win in ipairs({ left, right }) do
    api.nvim_win_call(win, function()
      vim.cmd("diffthis")
    end)
    vim.wo[win].foldlevel = 0
    if #item.hunks > 0 then
      vim.wo[win].signcolumn = "yes" -- the hunks' signs
    end
  end
  M.refresh_winbars()
  M.refresh_labels(item)
  -- the cursor on the first change of the new text
  api.nvim_win_call(right, function()
    pcall(vim.cmd, "normal! gg]c")
  end)
  -- the labels follow what the user types in the "after" buffer
  api.nvim_create_autocmd({ "TextChanged", "TextChangedI" }, {
    group = augroup,
    buffer = after,
    callback = function()
      M.refresh_labels(item)
    end,
  })
  -- the user closed the tab (or a window of it): the review still waits; :AgentReview reopens it
  api.nvim_create_autocmd("BufWipeout", {
    group = augroup,
    buffer = before,
    callback = function()
      M._view_lost(item)
    end,
  })
  api.nvim_create_autocmd("BufWipeout", {
    group = augroup,
    buffer = after,
    callback = function()
      if not item.done then
        keep_draft(item)
      end
      M._view_lost(item)
    end,
  })
end

function M._view_lost(item)
  if item.view and not item.closing then
    vim.schedule(function()
      if item.view and not item.closing and M.queue[1] == item then
        item.closing = true
        close_view(item)
        item.closing = false
        notify(
          ("the review of %s still waits: :AgentReview shows it, :AgentAccept or :AgentReject answers it"):format(
            display_path(item.params)
          ),
          vim.log.levels.WARN
        )
      end
    end)
  end
end

--- Show the first waiting review, if it is not on the screen.
local function show_first()
  local item = M.queue[1]
  if item and not item.view and api.nvim_get_mode().mode:sub(1, 1) == "c" then
    -- windows cannot change while the user types a command: open it when the command line closes
    api.nvim_create_autocmd("CmdlineLeave", { group = augroup, once = true, callback = function()
      vim.schedule(show_first)
    end })
    return
  end
  if item and not item.view then
    local ok, err = pcall(open_view, item)
    if not ok then
      notify("could not open the review: " .. tostring(err), vim.log.levels.ERROR)
    end
  end
  M.refresh_winbars()
end

--- Take `item` out of the queue and close its tab; the next review shows.
local function remove(item)
  for i, queued in ipairs(M.queue) do
    if queued == item then
      table.remove(M.queue, i)
      break
    end
  end
  item.closing = true
  close_view(item)
  mark(item, false)
  show_first()
end

--- Answer `item` with `result` (resumed on the next tick, outside of the caller).
local function answer(item, result)
  if item.done then
    return
  end
  item.done = true
  remove(item)
  vim.schedule(function()
    coroutine.resume(item.co, result)
  end)
end

--- Forget `item` without answering: the server is not waiting for it any more.
local function drop(item)
  if item.done then
    return
  end
  item.done = true
  remove(item)
end

--- Whether the call of a review has already ended (its end can be handled before the request).
local function call_ended(params)
  local t = require("agentls.state").transcripts[params.sessionId]
  local tool = t and t.tools[params.toolCallId]
  return tool ~= nil and (tool.status == "done" or tool.status == "failed")
end

--- The handler of `agent/reviewEdit`.
---@param params table {sessionId, toolCallId, toolName, uri, path, oldText, newText, hunks?}
---@return {outcome: "accept"|"reject", reason: string?, hunks: integer[]?, text: string?}?
function M.handle(params)
  local co, is_main = coroutine.running()
  if type(params) ~= "table" then
    return { outcome = "reject", reason = "the editor got no change to review" }
  end
  if not co or is_main then
    return { outcome = "reject", reason = "the editor could not show the review" }
  end
  if call_ended(params) then
    return coroutine.yield() -- cancelled before it could show: never answered
  end
  next_id = next_id + 1
  local item = { id = next_id, params = params, co = co, key = key(params.sessionId, params.toolCallId) }
  item.request_id = require("agentls.client").server_request_id("agent/reviewEdit")
  M.queue[#M.queue + 1] = item
  mark(item, true)
  show_first()
  return coroutine.yield()
end

--- The review on the screen (the first waiting one), or nil after telling the user.
local function current(what)
  local item = M.queue[1]
  if not item then
    notify(("no review to %s: none is waiting"):format(what), vim.log.levels.WARN)
  end
  return item
end

--- :AgentAccept: the change lands, as the "after" side shows it (some hunks rejected, or
--- edited by the user).
function M.accept()
  local item = current("accept")
  if item then
    answer(item, M.answer_of(item))
  end
end

--- :AgentReject [reason]: nothing is written; the model reads the reason.
function M.reject(reason)
  local item = current("reject")
  if item then
    reason = vim.trim(reason or "")
    answer(item, { outcome = "reject", reason = reason ~= "" and reason or nil })
  end
end

--- `gr`: reject, asking for a reason first (cancelling the question keeps the review).
function M.reject_asking()
  local item = current("reject")
  if not item then
    return
  end
  local prompt = ("Reject the change to %s; why (optional): "):format(display_path(item.params))
  vim.ui.input({ prompt = prompt }, function(reason)
    if reason == nil or M.queue[1] ~= item then
      return
    end
    M.reject(reason)
  end)
end

--- :AgentReview: show the waiting review again (after its tab was closed).
function M.show()
  if current("show") then
    show_first()
    local view = M.queue[1].view
    if view and api.nvim_tabpage_is_valid(view.tab) then
      api.nvim_set_current_tabpage(view.tab)
    end
  end
end

--- The waiting reviews of a session (all of them without one), for the panel.
function M.waiting(session_id)
  local items = {}
  for _, item in ipairs(M.queue) do
    if session_id == nil or item.params.sessionId == session_id then
      local params = item.params
      items[#items + 1] = { toolName = params.toolName, path = display_path(params), shown = item == M.queue[1] }
    end
  end
  return items
end

local function drop_where(predicate)
  for _, item in ipairs(vim.list_slice(M.queue)) do
    if predicate(item) then
      drop(item)
    end
  end
end

--- A tool call ended (`tool_execution_end`): a review of it still waiting was cancelled.
function M.tool_ended(session_id, tool_call_id)
  local k = key(session_id, tool_call_id)
  drop_where(function(item)
    return item.key == k
  end)
end

--- A run settled: no call of it waits for a review any more.
function M.session_settled(session_id)
  drop_where(function(item)
    return item.params.sessionId == session_id
  end)
end

--- The server stopped: every review is void.
function M.server_stopped()
  drop_where(function()
    return true
  end)
end

--- `$/cancelRequest` from the server: the review of that request closes (it was answered in
--- another client attached to the session). When the request's id is not known, the review
--- closes when its call ends (`tool_execution_end` follows the cancellation).
function M.on_cancel(id)
  M.cancelled = (M.cancelled or 0) + 1
  drop_where(function(item)
    return id ~= nil and item.request_id == id
  end)
end

return M
