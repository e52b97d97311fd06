--- The session as a tree: :AgentRewind, :AgentFork and :AgentTree, and the `agent/branch`
--- notification (see "Session tree" in protocol.md).
---
--- A prompt is undone by rewinding to the entry before its user message (that message's
--- `parentId` in `agent/getTree`; `null` for the first one), which leaves the prompt and its run
--- on a branch of their own; the files the agent changed after that entry are put back unless
--- the user keeps them. The message's text goes back into the prompt input. `agent/fork` makes a
--- new session of the history up to that entry instead. :AgentTree shows every branch; `<CR>`
--- goes to another one (`agent/switchBranch`).
local client = require("agentls.client")
local state = require("agentls.state")
local util = require("agentls.util")

local api = vim.api
local levels = vim.log.levels
local M = {}

local notify, fail = util.notify, util.fail

--- JSON null decodes as nil in objects, vim.NIL in arrays: both are "none".
local function value(x)
  if x == vim.NIL then
    return nil
  end
  return x
end

local function one_line(text, width)
  text = vim.trim(((text or ""):gsub("%s+", " ")))
  width = width or 100
  if vim.fn.strchars(text) > width then
    return vim.fn.strcharpart(text, 0, width - 1) .. "…"
  end
  return text
end

local function when(timestamp)
  local ms = tonumber(value(timestamp))
  return ms and os.date("%Y-%m-%d %H:%M", math.floor(ms / 1000)) or ""
end

-- The user messages ------------------------------------------------------------------------

---@class agentls.UserMessage
---@field ordinal integer 1 for the transcript's first user message
---@field index integer the message's index in `agent/getMessages` (1-based)
---@field entry_id string its session-file entry
---@field before string? the entry to rewind or fork at to undo it (nil: before the first message)
---@field text string
---@field preview string
---@field timestamp number?

--- `callback(messages)` with the user messages of the session's current branch, oldest first
--- (`agent/getMessages` for their entries, `agent/getTree` for the entries before them), or
--- `callback(nil, err)`.
---@param callback fun(messages: agentls.UserMessage[]?, err: any)
function M.user_messages(session_id, callback)
  client.request("agent/getMessages", { sessionId = session_id }, function(err, result)
    if err then
      return callback(nil, err)
    end
    client.request("agent/getTree", { sessionId = session_id }, function(tree_err, tree)
      if tree_err then
        return callback(nil, tree_err)
      end
      local parents = {}
      for _, entry in ipairs(tree.entries or {}) do
        parents[entry.id] = value(entry.parentId) or false
      end
      local messages, ids = result.messages or {}, result.entryIds or {}
      local found = {}
      for i, message in ipairs(messages) do
        local id = value(ids[i])
        if message.role == "user" and id then
          local before = parents[id]
          if before == nil then -- not in the tree: the message before it in the transcript
            before = value(ids[i - 1]) or false
          end
          -- the editor context sent with the prompt goes with it
          local previous = messages[i - 1]
          if before and previous and previous.role == "custom" and previous.customType == "editorContext"
            and value(ids[i - 1]) == before then
            local above = parents[before]
            before = above == nil and (value(ids[i - 2]) or false) or above
          end
          local text = require("agentls.transcript").content_text(message.content)
          found[#found + 1] = {
            ordinal = #found + 1,
            index = i,
            entry_id = id,
            before = before or nil,
            text = text,
            preview = one_line(text),
            timestamp = value(message.timestamp),
          }
        end
      end
      callback(found)
    end)
  end)
end

--- The user message shown on the panel's line `row` (0-based), matched with the session's
--- messages: the same ordinal among the user messages, else the last one with the same text.
local function message_of_panel_entry(entry, messages)
  local t = require("agentls.panel").transcript
  local ordinal = 0
  for _, e in ipairs(t and t.entries or {}) do
    if e.kind == "user" then
      ordinal = ordinal + 1
    end
    if e == entry then
      break
    end
  end
  local same = messages[ordinal]
  if same and same.text == entry.text then
    return same
  end
  for i = #messages, 1, -1 do
    if messages[i].text == entry.text then
      return messages[i]
    end
  end
  return nil
end

--- The panel's user message on line `row` (0-based), or the last one above it (the prompt an
--- answer or a tool row belongs to).
local function panel_user_entry(row)
  local panel = require("agentls.panel")
  local entry, t = panel.entry_at(row), panel.transcript
  if not (entry and t) then
    return nil
  end
  local found
  for _, e in ipairs(t.entries) do
    if e.kind == "user" then
      found = e
    end
    if e == entry then
      return found
    end
  end
  return nil
end

--- `callback(session_id, message)` with the user message to rewind or fork at: the one under the
--- panel's cursor or above it (`opts.from_panel`), else one picked with vim.ui.select, newest first.
local function with_message(what, opts, callback)
  local from_panel = opts and opts.from_panel
  local session_id = state.current
  if not session_id then
    return notify(("no session to %s: start one with :AgentPrompt {text}"):format(what), levels.ERROR)
  end
  local entry
  if from_panel then
    entry = panel_user_entry(api.nvim_win_get_cursor(0)[1] - 1)
    if not entry then
      return notify(("put the cursor on one of your messages (▍You), or below one, to %s there"):format(what),
        levels.WARN)
    end
  end
  state.attach(session_id, function(attach_err)
    if attach_err then
      return fail(attach_err)
    end
    M.user_messages(session_id, function(messages, err)
      if not messages then
        return fail(err)
      end
      if #messages == 0 then
        return notify(("nothing to %s: the session has no message of yours yet"):format(what), levels.WARN)
      end
      if entry then
        local message = message_of_panel_entry(entry, messages)
        if not message then
          return notify("that message is not in the session's stored transcript", levels.WARN)
        end
        return callback(session_id, message)
      end
      local newest_first = {}
      for i = #messages, 1, -1 do
        newest_first[#newest_first + 1] = messages[i]
      end
      util.select(newest_first, {
        prompt = ("agentls: %s to before which message?"):format(what),
        kind = "agentls.user_message",
        format_item = function(message)
          return ("%d. %s  %s"):format(message.ordinal, message.preview, when(message.timestamp))
        end,
      }, function(choice)
        callback(session_id, choice)
      end)
    end)
  end)
end

--- Put `text` back in the prompt input, to send again (or change first).
local function prefill(text)
  local commands = require("agentls.commands")
  commands.ask_text("prompt", text, commands.send_prompt)
end

--- `[{path, action}]` as "a.txt reverted, c.txt deleted".
local function file_list(files, field)
  local parts = {}
  for _, file in ipairs(files or {}) do
    parts[#parts + 1] = ("%s %s"):format(file.path or "?", file[field] or "")
  end
  return table.concat(parts, ", ")
end

--- What a rewind or switch did, in one notification.
local function report(verb, result, files)
  local parts = { verb }
  local reverted, skipped = result.reverted or {}, result.skipped or {}
  if #reverted > 0 then
    parts[#parts + 1] = ("files: %s"):format(file_list(reverted, "action"))
  elseif files then
    parts[#parts + 1] = "no file to put back"
  else
    parts[#parts + 1] = "files left as they are"
  end
  local level = levels.INFO
  if #skipped > 0 then
    local why = {}
    for _, file in ipairs(skipped) do
      why[#why + 1] = ("%s (%s)"):format(file.path or "?", file.reason or "?")
    end
    parts[#parts + 1] = "skipped: " .. table.concat(why, ", ")
    level = levels.WARN
  end
  if type(value(result.summary)) == "string" then
    parts[#parts + 1] = "the branch left behind is summarised"
  end
  notify(table.concat(parts, "; "), level)
end

--- Ask `question` (vim.ui.select of `items`, `{id, label}` each); `callback(item)` with the
--- answer, nothing when the user cancels.
local function choose(question, items, callback)
  util.select(items, {
    prompt = "agentls: " .. question,
    kind = "agentls.confirm",
    format_item = function(item)
      return item.label
    end,
  }, callback)
end

--- Send `method` (`agent/rewind` or `agent/switchBranch`) with `params`; a `fileConflict`
--- lists the files and offers to revert the others (`force`), a failed summary offers to go
--- without one. `done(result)` after it succeeded.
local function move(method, params, done)
  client.request(method, params, function(err, result)
    if not err then
      return done(result)
    end
    local kind = client.error_kind(err)
    if kind == "fileConflict" and not params.force then
      local files = type(err.data.files) == "table" and err.data.files or {}
      local lines = {}
      for _, file in ipairs(files) do
        lines[#lines + 1] = ("%s: %s"):format(file.path or "?", file.reason or "?")
      end
      notify("these files changed since the agent's edit; reverting would lose that: " .. table.concat(lines, "; "),
        levels.WARN)
      local others = { id = "force", label = "Revert the others (leave these as they are)" }
      local cancel = { id = "cancel", label = "Cancel (nothing changes)" }
      local names = table.concat(vim.tbl_map(function(file)
        return file.path or "?"
      end, files), ", ")
      local question = ("%d file%s changed since the agent's edit (%s)"):format(#files, #files == 1 and "" or "s",
        names)
      return choose(question, { others, cancel }, function(choice)
        if choice.id == "force" then
          move(method, vim.tbl_extend("force", params, { force = true }), done)
        end
      end)
    elseif kind == "summaryFailed" and params.summarize then
      notify(client.error_text(err), levels.WARN)
      local without = { id = "without", label = "Go on without a summary" }
      local cancel = { id = "cancel", label = "Cancel (nothing changes)" }
      return choose("the summary of the branch left behind failed", { without, cancel }, function(choice)
        if choice.id == "without" then
          move(method, vim.tbl_extend("force", params, { summarize = false }), done)
        end
      end)
    elseif kind == "busy" then
      return notify("the agent is running: :AgentAbort it first, then try again", levels.WARN)
    end
    fail(err)
  end)
end

--- Ask `question` with two answers; `callback(true)` for the first (the default), false for the
--- second; nothing when the user cancels.
local function ask(question, first, second, callback)
  choose(question, { { id = true, label = first }, { id = false, label = second } }, function(choice)
    callback(choice.id)
  end)
end

-- :AgentRewind ------------------------------------------------------------------------------

--- Rewind `session_id` to before `message`: `agent/rewind`, then the transcript read again and
--- the message's text in the prompt input.
function M.rewind_to(session_id, message, files, summarize)
  local params = {
    sessionId = session_id,
    entryId = message.before or vim.NIL,
    files = files,
    summarize = summarize,
  }
  move("agent/rewind", params, function(result)
    state.reload(session_id, function()
      state.refresh_state(session_id)
      report(("rewound to before message %d (%s)"):format(message.ordinal, one_line(message.text, 40)), result, files)
      api.nvim_exec_autocmds("User", { pattern = "AgentlsRewound", modeline = false, data = result })
      prefill(message.text)
    end)
  end)
end

--- :AgentRewind[!]: undo a prompt and what came after it. Without `!` the files the agent changed
--- since are put back (asked, default yes); a summary of the branch left behind is asked for.
---@param opts {keep_files: boolean?, from_panel: boolean?}?
function M.rewind(opts)
  opts = opts or {}
  with_message("rewind", opts, function(session_id, message)
    local function summary(files)
      ask("summarise the branch left behind (for the model)?", "No summary", "Summarise it", function(no)
        M.rewind_to(session_id, message, files, not no)
      end)
    end
    if opts.keep_files then
      return summary(false)
    end
    ask(
      ("rewind to before message %d: put back the files the agent changed since?"):format(message.ordinal),
      "Revert the files",
      "Keep the files as they are",
      summary
    )
  end)
end

-- :AgentFork --------------------------------------------------------------------------------

--- Show a session that the server has loaded in the panel, its transcript read.
local function show_session(session_id, callback)
  state.detached[session_id] = nil
  state.reload(session_id, function(err)
    if err then
      return
    end
    state.set_current(session_id)
    state.refresh_state(session_id)
    local config = require("agentls.config")
    if config.options.panel.auto_open then
      require("agentls.panel").open(false)
    end
    callback()
  end)
end

--- :AgentFork: a new session with the history up to before a message (a new empty session
--- for the first one); the panel shows it and the message's text is in the prompt input.
---@param opts {from_panel: boolean?}?
function M.fork(opts)
  with_message("fork", opts, function(session_id, message)
    local function forked(new_id)
      show_session(new_id, function()
        notify(("forked session %s into %s, before message %d"):format(session_id:sub(1, 8), new_id:sub(1, 8),
          message.ordinal))
        api.nvim_exec_autocmds("User", { pattern = "AgentlsForked", modeline = false,
          data = { from = session_id, sessionId = new_id } })
        prefill(message.text)
      end)
    end
    if message.before then
      return client.request("agent/fork", { sessionId = session_id, entryId = message.before }, function(err, result)
        if err then
          return fail(err)
        end
        forked(result.sessionId)
      end)
    end
    -- before the first message: a new session with the same folder and model
    local t = state.transcripts[session_id]
    local params = { cwd = t and t.cwd or require("agentls.config").root_dir(), model = t and t.model or nil,
      thinkingLevel = t and t.thinking_level or nil }
    client.request("agent/newSession", params, function(err, result)
      if err then
        return fail(err)
      end
      forked(result.sessionId)
    end)
  end)
end

-- :AgentTree --------------------------------------------------------------------------------

M.ns = api.nvim_create_namespace("agentls.tree")

--- The tree buffer's state: its session, and what each line names ({entryId} or nil).
M.view = { buf = nil, session_id = nil, lines = {} }

local ROLE = {
  user = "You",
  assistant = "Assistant",
  toolResult = "Tool",
  bashExecution = "$",
  custom = "Note",
  compactionSummary = "Compaction",
  branchSummary = "Branch summary",
}

local function entry_label(entry)
  local kind = value(entry.type)
  if kind == "compaction" then
    return "Compaction"
  elseif kind == "branchSummary" then
    return "Branch summary"
  end
  local role = value(entry.role)
  if role == "custom" and (value(entry.preview) or ""):find("^The user attached context from the editor") then
    return "Editor context"
  end
  return ROLE[role] or tostring(role or kind or "?")
end

--- The tree's lines: `{text, entry_id?, group?}` (a header, the branches, then the entries,
--- indented where the conversation branches).
function M.tree_lines(tree, session_id)
  local lines = {}
  local leaf = value(tree.leafId)
  local function add(text, entry_id, group)
    lines[#lines + 1] = { text = text, entry_id = entry_id, group = group }
  end
  add(("agentls tree · session %s · <CR> go there · F go there with its files · L label · r refresh · q close")
    :format(session_id:sub(1, 8)), nil, "AgentlsWinbar")
  add("")
  local branches = tree.branches or {}
  add(("Branches (%d)"):format(#branches), nil, "Title")
  for _, branch in ipairs(branches) do
    local current = branch.current == true
    local preview = one_line(value(branch.preview) or "", 70)
    local count = tonumber(branch.messageCount) or 0
    local text = ("%s %s  · %d messages · %s"):format(current and "●" or "○", preview, count, when(branch.timestamp))
    add("  " .. text .. (current and "  ← current" or ""), value(branch.leafId), current and "AgentlsToolDone" or nil)
  end
  add("")
  add(leaf and "Entries (● the current branch, ◀ where the session is)"
    or "Entries (the session is before its first message)", nil, "Title")
  local children, roots = {}, {}
  local entries = tree.entries or {}
  for _, entry in ipairs(entries) do
    local parent = value(entry.parentId)
    if parent then
      children[parent] = children[parent] or {}
      table.insert(children[parent], entry)
    else
      roots[#roots + 1] = entry
    end
  end
  local function render(entry, depth, fork_mark)
    local on = entry.onBranch == true
    local mark = on and "●" or "○"
    local label = value(entry.label)
    local files = type(value(entry.files)) == "table" and #entry.files > 0
      and ("  [" .. table.concat(entry.files, ", ") .. "]") or ""
    local text = ("%s%s%s %s: %s%s%s  %s"):format(
      ("  "):rep(depth + 1),
      fork_mark or "",
      mark,
      entry_label(entry),
      one_line(value(entry.preview) or "", 90),
      label and ("  #" .. label) or "",
      files,
      when(entry.timestamp)
    )
    if entry.id == leaf then
      text = text .. "  ◀"
    end
    add(text, entry.id, entry.id == leaf and "AgentlsToolDone" or (not on and "Comment" or nil))
  end
  -- iterative walk: a long conversation is a long chain
  local stack = {}
  for i = #roots, 1, -1 do
    stack[#stack + 1] = { roots[i], #roots > 1 and 1 or 0, #roots > 1 and "├ " or nil }
  end
  while #stack > 0 do
    local top = table.remove(stack)
    local entry, depth = top[1], top[2]
    render(entry, depth, top[3])
    local kids = children[entry.id] or {}
    if #kids == 1 then
      stack[#stack + 1] = { kids[1], depth, nil }
    else
      for i = #kids, 1, -1 do
        stack[#stack + 1] = { kids[i], depth + 1, "├ " }
      end
    end
  end
  return lines
end

local function tree_buf()
  return util.scratch_buffer(M.view, "agentls://tree", "agentls-tree", function(buf)
    util.map(buf, "<CR>", function()
      M.switch_at_cursor(false)
    end, "go to this entry's branch (files untouched)")
    util.map(buf, "F", function()
      M.switch_at_cursor(true)
    end, "go to this entry's branch, reverting and applying the files")
    util.map(buf, "L", function()
      M.label_at_cursor()
    end, "label (bookmark) this entry")
    util.map(buf, "r", function()
      M.refresh()
    end, "refresh the tree")
    util.map_close(buf, "close the tree")
    -- a run of the shown session adds entries: draw them when it ends
    vim.api.nvim_create_autocmd("User", {
      group = api.nvim_create_augroup("agentls.tree", { clear = true }),
      pattern = "AgentlsSettled",
      callback = function(args)
        if M.visible() and type(args.data) == "table" and args.data.sessionId == M.view.session_id then
          M.refresh()
        end
      end,
    })
  end)
end

--- Whether the tree buffer is shown in a window.
function M.visible()
  return util.is_shown(M.view.buf)
end

--- Draw `tree` (of `session_id`) in the tree buffer.
local function draw(tree, session_id)
  local buf = tree_buf()
  local lines = M.tree_lines(tree, session_id)
  M.view.session_id, M.view.lines, M.view.tree = session_id, lines, tree
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, vim.tbl_map(function(line)
    return line.text
  end, lines))
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
  for i, line in ipairs(lines) do
    if line.group then
      api.nvim_buf_set_extmark(buf, M.ns, i - 1, 0, { end_row = i - 1, end_col = #line.text, hl_group = line.group })
    end
  end
  api.nvim_exec_autocmds("User", { pattern = "AgentlsTree", modeline = false, data = { sessionId = session_id } })
end

--- `callback(tree)` with `agent/getTree` of `session_id`; an error is notified.
local function get_tree(session_id, callback)
  client.request("agent/getTree", { sessionId = session_id }, function(err, tree)
    if err then
      return fail(err)
    end
    callback(tree)
  end)
end

--- Read the tree of the shown session again and redraw it (the cursor stays on its entry).
function M.refresh(callback)
  local session_id = M.view.session_id
  if not session_id then
    return
  end
  get_tree(session_id, function(tree)
    local buf = tree_buf()
    local win = vim.fn.win_findbuf(buf)[1]
    local row = win and api.nvim_win_get_cursor(win)[1]
    local at = row and M.view.lines[row] and M.view.lines[row].entry_id
    draw(tree, session_id)
    if win then
      for i, line in ipairs(M.view.lines) do
        if at and line.entry_id == at then
          row = i
          break
        end
      end
      api.nvim_win_set_cursor(win, { math.min(row, api.nvim_buf_line_count(buf)), 0 })
    end
    if callback then
      callback(tree)
    end
  end)
end

--- :AgentTree: the current session's tree in a scratch buffer (a split below); the cursor on
--- where the session is.
function M.open()
  local session_id = state.current
  if not session_id then
    return notify("no session to show: start one with :AgentPrompt {text}", levels.ERROR)
  end
  state.attach(session_id, function(attach_err)
    if attach_err then
      return fail(attach_err)
    end
    get_tree(session_id, function(tree)
      local buf = tree_buf()
      draw(tree, session_id)
      local win = util.show_below(buf)
      local leaf = value(tree.leafId)
      for i, line in ipairs(M.view.lines) do
        if i > 3 and line.entry_id and line.entry_id == leaf then
          api.nvim_win_set_cursor(win, { i, 0 })
        end
      end
    end)
  end)
end

--- The entry on the tree buffer's cursor line.
local function entry_at_cursor()
  local line = M.view.lines[api.nvim_win_get_cursor(0)[1]]
  return line and line.entry_id
end

--- Go to the branch of the entry under the cursor (`agent/switchBranch`); `files`: revert the
--- branch left and apply the one gone to.
function M.switch_at_cursor(files)
  local entry_id, session_id = entry_at_cursor(), M.view.session_id
  if not (entry_id and session_id) then
    return notify("put the cursor on an entry or a branch", levels.WARN)
  end
  M.switch(session_id, entry_id, files)
end

function M.switch(session_id, entry_id, files)
  local params = { sessionId = session_id, entryId = entry_id, files = files }
  move("agent/switchBranch", params, function(result)
    state.reload(session_id, function()
      state.refresh_state(session_id)
      report("switched branch", result, files)
      api.nvim_exec_autocmds("User", { pattern = "AgentlsSwitched", modeline = false, data = result })
      M.refresh()
    end)
  end)
end

--- Label (bookmark) the entry under the cursor; an empty label clears it.
function M.label_at_cursor()
  local entry_id, session_id = entry_at_cursor(), M.view.session_id
  if not (entry_id and session_id) then
    return notify("put the cursor on an entry", levels.WARN)
  end
  vim.ui.input({ prompt = "agentls: label (empty clears it): " }, function(label)
    if label == nil then
      return
    end
    local params = { sessionId = session_id, entryId = entry_id, label = vim.trim(label) }
    client.request("agent/setLabel", params, function(err)
      if err then
        return fail(err)
      end
      M.refresh()
    end)
  end)
end

-- agent/branch --------------------------------------------------------------------------------

--- `agent/branch`: the session is on another branch; its transcript is read again (and its tree,
--- when shown). The `User` autocmd `AgentlsBranch` follows, with the params as data.
function M.on_branch(params)
  if type(params) ~= "table" or not params.sessionId then
    return
  end
  local session_id = params.sessionId
  if not state.accept(params) then -- a sync reads the transcript anyway
    return
  end
  state.reload(session_id, function()
    if M.view.session_id == session_id and M.visible() then
      M.refresh()
    end
    api.nvim_exec_autocmds("User", { pattern = "AgentlsBranch", modeline = false, data = params })
  end)
end

return M
