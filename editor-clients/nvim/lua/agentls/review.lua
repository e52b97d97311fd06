--- `agent/reviewEdit`: show the agent's change of a file as a diff, before it lands.
---
--- The server sends the whole file before and after the change (the permission mode
--- `review` of `write` and `edit`). The review opens in a tab of its own: two scratch
--- buffers, `agentls://review/PATH (before)` and `(after)`, in diff mode. `:AgentAccept`
--- or `:AgentReject [reason]` (in the tab also `ga` and `gr`) answer it and close the tab.
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

---@type agentls.Review[] the waiting reviews, in arrival order; the first one is shown
M.queue = {}
local next_id = 0
local augroup = api.nvim_create_augroup("agentls.review", { clear = true })

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
    { text = "ga / :AgentAccept accept", keep = 80, short = "ga accept" },
    { text = "gr / :AgentReject reject", keep = 80, short = "gr reject" },
    { text = "]c next change", keep = 30 },
  }
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

local function scratch(name, text, filetype)
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
  api.nvim_buf_set_lines(buf, 0, -1, false, lines_of(text))
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  if filetype and filetype ~= "" then
    vim.bo[buf].filetype = filetype
  end
  vim.keymap.set("n", "ga", function()
    M.accept()
  end, { buffer = buf, nowait = true, desc = "agentls: accept the change" })
  vim.keymap.set("n", "gr", function()
    M.reject_asking()
  end, { buffer = buf, nowait = true, desc = "agentls: reject the change (asks for a reason)" })
  return buf
end

--- Close a review's tab (if it is still open) and go back to the tab the user was in.
local function close_view(item)
  local view = item.view
  if not view then
    return
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

--- Open the review's diff tab.
local function open_view(item)
  local params = item.params
  local path = display_path(params)
  local filetype = filetype_of(params)
  local return_tab = api.nvim_get_current_tabpage()
  local before = scratch(("agentls://review/%s (before)"):format(path), params.oldText, filetype)
  local after = scratch(("agentls://review/%s (after)"):format(path), params.newText, filetype)
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
  end
  M.refresh_winbars()
  -- the cursor on the first change of the new text
  api.nvim_win_call(right, function()
    pcall(vim.cmd, "normal! gg]c")
  end)
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
---@param params table {sessionId, toolCallId, toolName, uri, path, oldText, newText}
---@return {outcome: "accept"|"reject", reason: string?}?
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

--- :AgentAccept: the change lands.
function M.accept()
  local item = current("accept")
  if item then
    answer(item, { outcome = "accept" })
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

--- `$/cancelRequest` from the server: the request's id is not known to the handler, so the
--- review closes when its call ends (`tool_execution_end` follows the cancellation).
function M.on_cancel(_)
  M.cancelled = (M.cancelled or 0) + 1
end

return M
