--- :AgentChanges: what the agent's last run (or the whole session) changed, in the quickfix
--- list, a diff tab per file, and reverting a hunk or a file.
---
--- `agent/getChanges` gives the net change of a run (or of a span of entries), file by file,
--- with who changed each one (write, edit, bash, mcp, ...) and its hunks. The list has one item
--- per hunk (at the hunk's first line in the file) and one for a file without hunks (binary,
--- not recorded). In the quickfix window `d` opens the file beside its old text in a diff tab,
--- `r` reverts the hunk under the cursor and `R` its whole file (`agent/revertChanges`; a file
--- changed since the agent's change is a conflict: asked whether to force), and the list is
--- read again after each revert. The list remembers its span: the run it was made for (its
--- `runId`, not "the last run" at the time of the revert) or the whole session.
local client = require("agentls.client")
local hunks = require("agentls.hunks")
local util = require("agentls.util")

local api = vim.api
local levels = vim.log.levels
local notify, fail = util.notify, util.fail
local M = {}

---@class agentls.ChangesList
---@field session_id string
---@field all boolean the whole session, else one run
---@field run_id string? the run, once the server named it
---@field cwd string the session's folder (paths are relative to it)
---@field items {path: string, index: integer?, file: table}[] by quickfix item

---@type table<integer, agentls.ChangesList> the lists made here, by quickfix list id
M.lists = {}

--- The keys of the quickfix window, for the README and the tests.
M.keys = {
  d = "the file beside its text before the change, in a diff tab",
  r = "revert the hunk under the cursor",
  R = "revert the whole file under the cursor",
}

--- The span of `list` as request params: its run, or the whole session.
local function span(list)
  if list.all then
    return { sessionId = list.session_id, fromEntryId = vim.NIL }
  end
  return { sessionId = list.session_id, runId = list.run_id }
end

local function filename_of(list, file)
  if type(file.uri) == "string" then
    local ok, name = pcall(vim.uri_to_fname, file.uri)
    if ok then
      return name
    end
  end
  return vim.fs.joinpath(list.cwd, file.path)
end

--- What an item says of its file: "modified [bash]", "renamed from a.txt [bash]", ...
local function file_text(file)
  local status = file.status == "renamed" and ("renamed from %s"):format(file.oldPath or "?") or file.status
  local by = type(file.by) == "table" and #file.by > 0 and (" [%s]"):format(table.concat(file.by, ", ")) or ""
  return tostring(status) .. by
end

--- The quickfix items of `files`, and what each one is of (`list.items`).
local function items_of(list, files)
  local qf, items = {}, {}
  for _, file in ipairs(files) do
    local filename = filename_of(list, file)
    local file_hunks = type(file.hunks) == "table" and file.hunks or {}
    if #file_hunks == 0 then
      local why = file.binary and " · binary" or file.recorded == false and " · not recorded" or ""
      qf[#qf + 1] = { filename = filename, lnum = 1, text = file_text(file) .. why }
      items[#items + 1] = { path = file.path, file = file }
    end
    for i, hunk in ipairs(file_hunks) do
      local text = ("%s hunk %d/%d %s"):format(file_text(file), i, #file_hunks, hunks.header(hunk))
      qf[#qf + 1] = { filename = filename, lnum = math.max(1, hunk.newStart or 1), text = text }
      items[#items + 1] = { path = file.path, index = i - 1, file = file }
    end
  end
  return qf, items
end

local function title_of(list, count)
  local what = list.all and "the whole session" or "the last run"
  return ("agentls changes: %s of session %s (%d file%s)"):format(what, list.session_id:sub(1, 8), count,
    count == 1 and "" or "s")
end

local CHECKPOINTS = {
  off = "checkpoints are off: only the changes of write and edit are listed",
  unavailable = "checkpoints are unavailable in this folder: only the changes of write and edit are listed",
}

--- The list of quickfix list `id` (the current one without), if it is one of these lists.
local function list_of(id)
  local info = vim.fn.getqflist({ id = id or 0 })
  return info.id and M.lists[info.id], info.id
end

--- The list and item under the cursor of the quickfix window (or nil, after telling the user).
local function item_at_cursor()
  local list = list_of()
  if not list or vim.bo.buftype ~= "quickfix" or vim.fn.getwininfo(api.nvim_get_current_win())[1].loclist == 1 then
    notify("not in an agentls changes list: :AgentChanges opens one", levels.WARN)
    return nil
  end
  local item = list.items[api.nvim_win_get_cursor(0)[1]]
  if not item then
    notify("no change under the cursor", levels.WARN)
  end
  return list, item
end

--- The keys of the quickfix window (`M.keys`); they act on lists of :AgentChanges only.
local function map_keys(buf)
  util.map(buf, "d", function()
    M.diff()
  end, M.keys.d)
  util.map(buf, "r", function()
    local list, item = item_at_cursor()
    if list and item then
      if not item.index then
        return notify(("%s has no hunks: R reverts the whole file"):format(item.path), levels.WARN)
      end
      M.revert(list, { hunks = { { path = item.path, index = item.index } } })
    end
  end, M.keys.r)
  util.map(buf, "R", function()
    local list, item = item_at_cursor()
    if list and item then
      M.revert(list, { files = { item.path } })
    end
  end, M.keys.R)
end

--- Fill quickfix list `list` (a new one when it has no `qf_id`) with `result`'s files.
local function fill(list, result, open)
  list.run_id = result.runId ~= vim.NIL and result.runId or list.run_id
  local files = type(result.files) == "table" and result.files or {}
  local qf, items = items_of(list, files)
  list.items = items
  local what = { title = title_of(list, #files), items = qf, context = { agentls = "changes" } }
  if list.qf_id and vim.fn.getqflist({ id = list.qf_id }).id == list.qf_id then
    local idx = vim.fn.getqflist({ id = list.qf_id, idx = 0 }).idx
    what.id, what.idx = list.qf_id, math.max(1, math.min(idx, #qf))
    vim.fn.setqflist({}, "r", what)
  else
    vim.fn.setqflist({}, " ", what)
    list.qf_id = vim.fn.getqflist({ id = 0 }).id
  end
  M.lists[list.qf_id] = list
  if CHECKPOINTS[result.checkpoints] then
    notify(CHECKPOINTS[result.checkpoints], levels.WARN)
  end
  if #files == 0 then
    notify(("no changes in %s"):format(list.all and "the session" or "the last run"))
  end
  if open then
    local win = api.nvim_get_current_win()
    vim.cmd("botright copen")
    map_keys(api.nvim_get_current_buf())
    if #files == 0 and api.nvim_win_is_valid(win) then
      api.nvim_set_current_win(win)
    end
  end
  vim.api.nvim_exec_autocmds("User", { pattern = "AgentlsChanges", modeline = false, data = { files = files } })
end

--- Read `list`'s changes again (after a revert) into its quickfix list.
function M.refresh(list)
  client.request("agent/getChanges", span(list), function(err, result)
    if err then
      return fail(err)
    end
    fill(list, result, false)
  end)
end

--- :AgentChanges [all]: the changes of the last run of `session_id` (`all`: of the whole
--- session) in a new quickfix list, and its window opened.
function M.open(session_id, all)
  local cwd = require("agentls.config").root_dir()
  local list = { session_id = session_id, all = all == true, cwd = cwd, items = {} }
  client.request("agent/getChanges", span(list), function(err, result)
    if err then
      return fail(err)
    end
    fill(list, result, true)
  end)
end

--- What a revert did, told: "reverted two.txt (hunk 2)"; what was skipped, as a warning.
local function report(result)
  local done = {}
  for _, file in ipairs(type(result.reverted) == "table" and result.reverted or {}) do
    local which = type(file.hunks) == "table" and #file.hunks > 0 and (" (%s)"):format(
      (#file.hunks == 1 and "hunk " or "hunks ") .. table.concat(vim.tbl_map(function(i)
        return tostring(i + 1)
      end, file.hunks), ", ")) or ""
    done[#done + 1] = ("%s%s"):format(file.path, which)
  end
  local skipped = {}
  for _, file in ipairs(type(result.skipped) == "table" and result.skipped or {}) do
    skipped[#skipped + 1] = ("%s: %s"):format(file.path, file.reason or "?")
  end
  local parts = {}
  if #done > 0 then
    parts[#parts + 1] = "reverted " .. table.concat(done, ", ")
  end
  if #skipped > 0 then
    parts[#parts + 1] = "skipped " .. table.concat(skipped, "; ")
  end
  notify(#parts > 0 and table.concat(parts, "; ") or "nothing to revert", #skipped > 0 and levels.WARN or levels.INFO)
end

--- Revert part of `list`'s change: `target` is `{hunks = {{path, index}}}` or `{files = {path}}`.
--- A `fileConflict` asks whether to go on with `force` (the server then reverts the rest and
--- skips the files changed since: they keep what the user made of them); the list is read again
--- after.
function M.revert(list, target, force)
  local params = vim.tbl_extend("force", span(list), target, force and { force = true } or {})
  client.request("agent/revertChanges", params, function(err, result)
    if not err then
      report(result)
      vim.api.nvim_exec_autocmds("User", { pattern = "AgentlsReverted", modeline = false, data = result })
      return M.refresh(list)
    end
    local kind = client.error_kind(err)
    if kind == "fileConflict" and not force then
      local files = type(err.data.files) == "table" and err.data.files or {}
      local why = table.concat(vim.tbl_map(function(file)
        return ("%s: %s"):format(file.path or "?", file.reason or "?")
      end, files), "; ")
      notify("changed since the agent's change: " .. why, levels.WARN)
      local items = {
        { id = "force", label = "Force: revert the rest, leave the changed files as they are" },
        { id = "cancel", label = "Cancel (nothing changes)" },
      }
      local question = ("agentls: %s changed since the agent's change (reverting would lose that)"):format(
        table.concat(vim.tbl_map(function(file)
          return file.path or "?"
        end, files), ", ")
      )
      return util.select(items, {
        prompt = question,
        kind = "agentls.confirm",
        format_item = function(item)
          return item.label
        end,
      }, function(choice)
        if choice.id == "force" then
          M.revert(list, target, true)
        end
      end)
    elseif kind == "busy" then
      return notify("the agent is running: revert once it has stopped (or :AgentAbort it)", levels.WARN)
    end
    fail(err)
    M.refresh(list)
  end)
end

-- the diff tab ------------------------------------------------------------------------------

--- The file of the change to compare: the item under the cursor in a changes list, else the
--- current buffer's file in the newest changes list. (list, path, lnum) or nil.
local function diff_target()
  local list = list_of()
  if list and vim.bo.buftype == "quickfix" then
    local item = list.items[api.nvim_win_get_cursor(0)[1]]
    if item then
      local hunk = item.index and item.file.hunks[item.index + 1]
      return list, item.path, hunk and math.max(1, hunk.newStart) or 1
    end
  end
  local name = vim.fs.normalize(api.nvim_buf_get_name(0))
  local found, newest
  for id, candidate in pairs(M.lists) do
    if vim.fn.getqflist({ id = id }).id == id and (not newest or id > newest) then
      for _, item in ipairs(candidate.items) do
        if vim.fs.normalize(filename_of(candidate, item.file)) == name then
          found, newest = item, id
        end
      end
    end
  end
  if found then
    return M.lists[newest], found.path, api.nvim_win_get_cursor(0)[1]
  end
end

local function lines_of(text)
  if type(text) ~= "string" or text == "" then
    return {}
  end
  local lines = vim.split((text:gsub("\r\n", "\n")), "\n", { plain = true })
  if lines[#lines] == "" then
    lines[#lines] = nil
  end
  return lines
end

--- A read-only scratch buffer of the diff tab; `q` closes the tab.
local function scratch(name, lines, filetype)
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].buftype, vim.bo[buf].bufhidden, vim.bo[buf].swapfile = "nofile", "wipe", false
  if not pcall(api.nvim_buf_set_name, buf, name) then
    local n = 2
    while not pcall(api.nvim_buf_set_name, buf, ("%s <%d>"):format(name, n)) do
      n = n + 1
    end
  end
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable, vim.bo[buf].modified = false, false
  if filetype then
    vim.bo[buf].filetype = filetype
  end
  util.map(buf, "q", function()
    if #api.nvim_list_tabpages() > 1 then
      vim.cmd("tabclose")
    else
      vim.cmd("bwipeout")
    end
  end, "close the diff tab")
  return buf
end

--- Open the diff tab of `file` (getChanges's, with its texts): the old text in a scratch buffer
--- on the left, the file itself on the right (a scratch one when it was deleted), the cursor
--- on line `lnum` of the file.
local function open_diff(list, file, lnum)
  local filename = filename_of(list, file)
  local ok, filetype = pcall(vim.filetype.match, { filename = filename })
  filetype = ok and filetype or nil
  local old_name = file.oldPath or file.path
  local before = scratch(("agentls://changes/%s (before)"):format(old_name), lines_of(file.oldText), filetype)
  vim.cmd("tab sbuffer " .. before)
  local tab = api.nvim_get_current_tabpage()
  local left = api.nvim_get_current_win()
  if file.status == "deleted" then
    local gone = scratch(("agentls://changes/%s (deleted)"):format(file.path), {}, filetype)
    vim.cmd("rightbelow vertical sbuffer " .. gone)
  else
    vim.cmd("rightbelow vertical split " .. vim.fn.fnameescape(filename))
  end
  local right = api.nvim_get_current_win()
  for _, win in ipairs({ left, right }) do
    api.nvim_win_call(win, function()
      vim.cmd("diffthis")
    end)
    vim.wo[win].foldlevel = 0
  end
  local winbar = require("agentls.winbar")
  local function bar(text)
    return winbar.fit({
      { text = " agentls changes", short = " changes", group = "AgentlsWinbar", keep = 85, short_keep = 50,
        required = true },
      { text = text, keep = 100, required = true },
      { text = "q closes", keep = 60 },
      { text = "]c next change", keep = 30 },
    }, api.nvim_win_get_width(left))
  end
  vim.wo[left].winbar = bar(("%s before the change"):format(old_name))
  vim.wo[right].winbar = bar(("%s %s"):format(file.path, file_text(file)))
  local count = api.nvim_buf_line_count(api.nvim_win_get_buf(right))
  api.nvim_win_set_cursor(right, { math.max(1, math.min(lnum or 1, count)), 0 })
  return { tab = tab, before = left, after = right }
end

--- :AgentChangesDiff (`d` in the list): the file of the change under the cursor (or the current
--- buffer's) beside its text before the change, in a tab in diff mode. `callback(view)` once it
--- is open.
function M.diff(callback)
  local list, path, lnum = diff_target()
  if not list then
    return notify("no change to show: run :AgentChanges, then d on a change (or this in a changed file)",
      levels.WARN)
  end
  local params = vim.tbl_extend("force", span(list), { text = true })
  client.request("agent/getChanges", params, function(err, result)
    if err then
      return fail(err)
    end
    for _, file in ipairs(type(result.files) == "table" and result.files or {}) do
      if file.path == path then
        if file.binary or file.recorded == false then
          return notify(("%s: no text to compare (%s)"):format(path, file.binary and "binary" or "not recorded"),
            levels.WARN)
        end
        local view = open_diff(list, file, lnum)
        if callback then
          callback(view)
        end
        return
      end
    end
    notify(("%s is not changed any more"):format(path), levels.WARN)
  end)
end

return M
