--- The panel: a scratch buffer that shows the current session's transcript, in a split or a float.
---
--- Redraws are coalesced (at most one per `panel.redraw_ms`) and incremental: only the
--- entries whose revision changed since the last redraw, and those after them, are
--- rewritten, so a streaming answer costs a few lines per redraw however long the
--- transcript is. Nothing here blocks: notification handlers only call `M.schedule()`.
local config = require("agentls.config")
local render = require("agentls.render")
local util = require("agentls.util")

local api = vim.api
local M = {}

M.ns = api.nvim_create_namespace("agentls.panel")

---@type integer?
M.buf = nil
---@type agentls.Transcript?
M.transcript = nil

-- What the buffer holds: the header's text and line count; per entry index {rev, start (0-based
-- line), count}; the footer's first line.
local function empty_cache()
  return { transcript = nil, epoch = -1, header = nil, header_count = 0, entries = {}, footer_start = 0 }
end
local cache = empty_cache()
local scheduled = false

local HIGHLIGHTS = {
  AgentlsUserHeading = { link = "Function" },
  AgentlsAssistantHeading = { link = "Title" },
  AgentlsCustomHeading = { link = "Special" },
  AgentlsShellHeading = { link = "Function" },
  AgentlsCompactionHeading = { link = "Special" },
  AgentlsThinking = { link = "Comment" },
  AgentlsThinkingLabel = { link = "Special" },
  AgentlsToolName = { link = "Identifier" },
  AgentlsToolPending = { link = "Comment" },
  AgentlsToolAsking = { link = "DiagnosticWarn" },
  AgentlsToolRunning = { link = "DiagnosticInfo" },
  AgentlsToolDone = { link = "DiagnosticOk" },
  AgentlsToolFailed = { link = "DiagnosticError" },
  AgentlsToolOutput = { link = "Comment" },
  AgentlsNotice = { link = "WarningMsg" },
  AgentlsError = { link = "ErrorMsg" },
  AgentlsQueue = { link = "DiagnosticHint" },
  AgentlsHint = { link = "Comment" },
  AgentlsWinbar = { link = "Title" },
  AgentlsAttachment = { link = "Special" },
  AgentlsSandbox = { link = "DiagnosticOk" },
  AgentlsSandboxRefused = { link = "DiagnosticError" },
  AgentlsSandboxUnconfined = { link = "DiagnosticWarn" },
  AgentlsHunkAccepted = { link = "DiagnosticOk" },
  AgentlsHunkRejected = { link = "DiagnosticError" },
  AgentlsHunkEdited = { link = "DiagnosticWarn" },
}

function M.define_highlights()
  for name, spec in pairs(HIGHLIGHTS) do
    api.nvim_set_hl(0, name, vim.tbl_extend("force", spec, { default = true }))
  end
end

local function valid_buf()
  return M.buf and api.nvim_buf_is_valid(M.buf)
end

--- The panel's windows (in any tab).
function M.windows()
  return util.windows(M.buf)
end

function M.is_open()
  return #M.windows() > 0
end

--- The question that a key of the panel answers: the trust question or the tool waiting for
--- permission on the cursor's row, else the only one waiting.
local function asking_tool_at(row)
  local question = (cache.questions or {})[row]
  if question then
    return question
  end
  local tool = M.target_at(row)
  if type(tool) == "table" and tool.status == "asking" and tool.id then
    return tool.id
  end
  return require("agentls.permissions").only_pending()
end

local function answer(outcome)
  return function()
    local id = asking_tool_at(api.nvim_win_get_cursor(0)[1] - 1)
    if not (id and require("agentls.permissions").answer(id, outcome)) then
      util.notify("no tool waits for permission here", vim.log.levels.WARN)
    end
  end
end

--- The panel's actions: the `panel.keymaps` and the `<Plug>(agentls-…)` mappings.
M.actions = {
  close = function()
    M.close()
  end,
  prompt = function()
    require("agentls.commands").prompt("")
  end,
  steer = function()
    require("agentls.commands").steer("")
  end,
  follow_up = function()
    require("agentls.commands").follow_up("")
  end,
  abort = function()
    require("agentls.commands").abort()
  end,
  cycle_mode = function()
    require("agentls.commands").cycle_mode()
  end,
  toggle = function()
    M.toggle_entry(api.nvim_win_get_cursor(0)[1] - 1)
  end,
  allow_once = answer("allowOnce"),
  allow_always = answer("allowAlways"),
  allow_server = answer("allowAlwaysServer"),
  reject = answer("reject"),
  help = function()
    M.help()
  end,
  rewind = function()
    require("agentls.tree").rewind({ from_panel = true })
  end,
  fork = function()
    require("agentls.tree").fork({ from_panel = true })
  end,
  tree = function()
    require("agentls.tree").open()
  end,
  edit_queued = function()
    require("agentls.queue").edit(M.queue_item_at(api.nvim_win_get_cursor(0)[1] - 1))
  end,
  queued_up = function()
    require("agentls.queue").move(M.queue_item_at(api.nvim_win_get_cursor(0)[1] - 1), -1)
  end,
  queued_down = function()
    require("agentls.queue").move(M.queue_item_at(api.nvim_win_get_cursor(0)[1] - 1), 1)
  end,
  remove_queued = function()
    require("agentls.queue").remove(M.queue_item_at(api.nvim_win_get_cursor(0)[1] - 1))
  end,
}

--- What the actions do, for `?` and the mappings' descriptions.
M.action_text = {
  close = "close the panel",
  prompt = "write a prompt",
  steer = "steer the running agent",
  follow_up = "queue a follow-up",
  abort = "abort the run",
  cycle_mode = "the next permission preset: ask, accept edits, read-only, bypass (:AgentMode)",
  toggle = "fold or unfold the row (tool output and arguments, thinking, summaries)",
  allow_once = "allow the tool call waiting for permission, once (a denied command: run it once outside the sandbox; "
    .. "a budget reached: continue, the limit raised)",
  allow_always = "allow it always (for this workspace and tool)",
  allow_server = "allow always every tool of its MCP server (MCP tools only)",
  reject = "reject the tool call waiting for permission (keep the sandbox's failure; stop at the budget)",
  help = "show these keys",
  rewind = "rewind to before your message under the cursor (:AgentRewind)",
  fork = "fork a new session before your message under the cursor (:AgentFork)",
  tree = "show the session's tree of branches (:AgentTree)",
  edit_queued = "edit the queued message under the cursor",
  queued_up = "deliver the queued message under the cursor earlier",
  queued_down = "deliver the queued message under the cursor later",
  remove_queued = "remove the queued message under the cursor",
}

M.action_order = {
  "prompt", "steer", "follow_up", "abort", "cycle_mode", "toggle",
  "allow_once", "allow_always", "allow_server", "reject",
  "rewind", "fork", "tree", "edit_queued", "queued_up", "queued_down", "remove_queued", "close", "help",
}

local function set_keymaps(buf)
  for action, lhs in pairs(config.options.panel.keymaps or {}) do
    if lhs and M.actions[action] then
      local desc = "agentls: " .. (M.action_text[action] or action)
      vim.keymap.set("n", lhs, M.actions[action], { buffer = buf, nowait = true, desc = desc })
    end
  end
end

--- The help window of `?` (a float over the panel), while it is open.
---@type integer?
M.help_win = nil

--- `?`: the panel's keys, in a float over the panel (a notification of several lines would
--- make Neovim wait for "Press ENTER"); `q`, `<Esc>` or `?` close it, as leaving it does.
function M.help()
  local keys = config.options.panel.keymaps or {}
  local lines = { " agentls panel keys" }
  for _, action in ipairs(M.action_order) do
    if keys[action] then
      lines[#lines + 1] = ("  %-6s %s"):format(keys[action], M.action_text[action])
    end
  end
  lines[#lines + 1] = " :AgentMode, :AgentModel, :AgentThinking, :AgentSessions, :AgentStats, :AgentBudget (:help agentls)"
  local buf = util.new_scratch("agentls://panel-keys")
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable, vim.bo[buf].bufhidden = false, "wipe"
  local width = 0
  for _, line in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(line))
  end
  local anchor = M.windows()[1] or api.nvim_get_current_win()
  local win_width, win_height = api.nvim_win_get_width(anchor), api.nvim_win_get_height(anchor)
  local win = api.nvim_open_win(buf, true, {
    relative = "win",
    win = anchor,
    row = 0,
    col = 0,
    width = math.max(10, math.min(width + 1, win_width - 2)),
    height = math.max(1, math.min(#lines, win_height - 2)),
    border = "rounded",
    title = " ? ",
    title_pos = "right",
  })
  vim.wo[win].wrap = true
  M.help_win = win
  local function close()
    if api.nvim_win_is_valid(win) then
      api.nvim_win_close(win, true)
    end
    M.help_win = nil
  end
  for _, lhs in ipairs({ "q", "<Esc>", "?" }) do
    util.map(buf, lhs, close, "close the list of keys")
  end
  api.nvim_create_autocmd("WinLeave", { buffer = buf, once = true, callback = close })
end

local function ensure_buf()
  local filetype = config.options.panel.filetype or "markdown"
  return util.scratch_buffer(M, "agentls://panel", filetype, function(buf)
    if filetype == "markdown" and config.options.panel.treesitter ~= false then
      -- code fences highlighted in their language (when the markdown parser is there)
      pcall(vim.treesitter.start, buf, "markdown")
    end
    set_keymaps(buf)
    M.invalidate()
  end)
end

local function set_window_options(win)
  local wo = vim.wo[win]
  wo.wrap, wo.linebreak, wo.breakindent = true, true, true
  wo.foldenable = false -- the panel folds its rows itself (<CR>); a markdown foldexpr would fight it
  wo.number, wo.relativenumber, wo.spell, wo.list = false, false, false, false
  wo.signcolumn, wo.foldcolumn, wo.cursorline = "no", "0", false
  wo.statuscolumn = " " -- a one-column margin
  wo.fillchars = "eob: "
end

--- Each panel window's winbar, fitted to its width (again after a resize: WinResized).
function M.refresh_winbars()
  local pending = require("agentls.context").labels()
  for _, win in ipairs(M.windows()) do
    local winbar = render.winbar(M.transcript, pending, api.nvim_win_get_width(win))
    if vim.wo[win].winbar ~= winbar then
      vim.wo[win].winbar = winbar
    end
  end
end

local function size(value, total)
  return math.max(1, value < 1 and math.floor(total * value) or math.floor(value))
end

--- The columns of a vertical split: `width` (columns, or a fraction of the editor's), within
--- `min_width`, and leaving at least `code_columns` for the other windows.
function M.split_width(columns)
  local opts = config.options.panel
  columns = columns or vim.o.columns
  local width = size(opts.width, columns)
  width = math.max(width, opts.min_width or 0)
  width = math.min(width, columns - (opts.code_columns or 0))
  return math.max(20, math.min(width, columns - 2))
end

--- Open the panel window (if it is not open). `enter` moves the cursor into it.
function M.open(enter)
  local buf = ensure_buf()
  local existing = M.windows()[1]
  if existing then
    if enter then
      api.nvim_set_current_win(existing)
    end
    return existing
  end
  local opts = config.options.panel
  local win
  if opts.layout == "float" then
    local width, height = size(opts.width, vim.o.columns), size(opts.height, vim.o.lines - 2)
    if opts.width >= 1 then
      width = math.min(width, vim.o.columns - 4)
    end
    win = api.nvim_open_win(buf, enter or false, {
      relative = "editor",
      width = width,
      height = height,
      row = math.floor((vim.o.lines - height) / 2) - 1,
      col = math.floor((vim.o.columns - width) / 2),
      border = "rounded",
      title = " agentls ",
      title_pos = "center",
    })
  else
    local vertical = opts.position == "right" or opts.position == "left"
    local win_opts = { split = opts.position, win = -1 }
    if vertical then
      win_opts.width = M.split_width()
    else
      win_opts.height = size(opts.height, vim.o.lines)
    end
    win = api.nvim_open_win(buf, enter or false, win_opts)
    vim.wo[win].winfixwidth = vertical
  end
  set_window_options(win)
  M.render()
  -- a reopened panel follows the newest output (its cursor goes to the end)
  api.nvim_win_set_cursor(win, { api.nvim_buf_line_count(buf), 0 })
  return win
end

--- Fit the panel's splits to the editor's new size (VimResized).
function M.resize()
  local opts = config.options.panel
  if opts.layout ~= "split" or not (opts.position == "right" or opts.position == "left") then
    return
  end
  for _, win in ipairs(M.windows()) do
    if api.nvim_win_get_config(win).relative == "" then
      api.nvim_win_set_width(win, M.split_width())
    end
  end
end

--- :AgentPanel: open the panel and enter it; from inside it, stay (`q` closes it).
function M.focus()
  local wins = M.windows()
  if vim.tbl_contains(wins, api.nvim_get_current_win()) then
    return
  end
  local here = vim.tbl_filter(function(win)
    return api.nvim_win_get_tabpage(win) == api.nvim_get_current_tabpage()
  end, wins)[1]
  if here then
    return api.nvim_set_current_win(here)
  end
  M.open(true)
end

function M.close()
  util.close_windows(M.windows(), false)
end

function M.toggle()
  if M.is_open() then
    M.close()
  else
    M.open(true)
  end
end

--- Show `transcript` (another session): redraw everything.
function M.show(transcript)
  M.transcript = transcript
  M.schedule()
end

--- Forget what the buffer holds: the next redraw rewrites all of it.
function M.invalidate()
  cache = empty_cache()
end

--- Request a redraw; several requests within `redraw_ms` make one.
function M.schedule()
  if scheduled then
    return
  end
  scheduled = true
  vim.defer_fn(function()
    scheduled = false
    M.render()
  end, config.options.panel.redraw_ms or 30)
end

--- The panel windows that follow new output: those whose cursor is on the last line (all of
--- them when `all`). Moving the cursor up stops following; going back to the end resumes it.
local function following(buf, all)
  local last = api.nvim_buf_line_count(buf)
  local wins = {}
  for _, win in ipairs(M.windows()) do
    if all or api.nvim_win_get_cursor(win)[1] >= last then
      wins[#wins + 1] = win
    end
  end
  return wins
end

--- Bring the buffer up to date with the transcript now.
function M.render()
  local t = M.transcript
  if not valid_buf() then
    return
  end
  local buf = M.buf
  local header_lines, header_hls = render.header(t)
  local header = table.concat(header_lines, "\n")
  local full = not t
    or cache.transcript ~= t
    or cache.epoch ~= t.epoch
    or #cache.entries > #t.entries
    or cache.header ~= header
  if full then
    cache = empty_cache()
    cache.transcript, cache.epoch, cache.header, cache.header_count = t, t and t.epoch or -1, header, #header_lines
  end
  local entries = t and t.entries or {}
  local first = #entries + 1
  for i, entry in ipairs(entries) do
    local cached = cache.entries[i]
    if not cached or cached.rev ~= entry.rev then
      first = i
      break
    end
  end
  local previous = cache.entries[first - 1]
  local start = first <= #entries and (previous and previous.start + previous.count or cache.header_count)
    or cache.footer_start

  local opts = config.options.panel
  local lines, hls = {}, {}
  local function add(entry_lines, entry_hls)
    local offset = #lines
    vim.list_extend(lines, entry_lines)
    for _, hl in ipairs(entry_hls) do
      hls[#hls + 1] = { hl[1] + offset, hl[2], hl[3], hl[4] }
    end
  end
  if full then
    start = 0
    add(header_lines, header_hls)
  end
  for i = first, #entries do
    local entry_lines, entry_hls, targets = render.entry(entries[i], t, opts)
    cache.entries[i] = { rev = entries[i].rev, start = start + #lines, count = #entry_lines, targets = targets }
    add(entry_lines, entry_hls)
  end
  cache.footer_start = start + #lines
  cache.queue_items, cache.questions = {}, {}
  local pending = require("agentls.context").labels()
  if t then
    local reviews = require("agentls.review").waiting(t.session_id)
    local questions = require("agentls.permissions").trust_questions(t.session_id)
    local footer_lines, footer_hls, items, asking = render.footer(t, pending, reviews, questions, opts)
    for row, item in pairs(items) do
      cache.queue_items[cache.footer_start + row] = item
    end
    for row, id in pairs(asking) do
      cache.questions[cache.footer_start + row] = id
    end
    add(footer_lines, footer_hls)
  else
    add({ "No session yet: :AgentPrompt {text} starts one." }, { { 0, 0, -1, "AgentlsHint" } })
    if #pending > 0 then
      add({ render.pending_line(pending) }, { { 0, 0, -1, "AgentlsAttachment" } })
    end
  end

  local follow = following(buf, full)
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, start, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  api.nvim_buf_clear_namespace(buf, M.ns, start, -1)
  for _, hl in ipairs(hls) do
    local row = start + hl[1]
    local line = lines[hl[1] + 1] or ""
    local col_end = hl[3] < 0 and #line or math.min(hl[3], #line)
    if hl[2] < col_end then
      api.nvim_buf_set_extmark(buf, M.ns, row, hl[2], { end_row = row, end_col = col_end, hl_group = hl[4] })
    end
  end

  M.refresh_winbars()
  local last = api.nvim_buf_line_count(buf)
  for _, win in ipairs(follow) do
    api.nvim_win_set_cursor(win, { last, 0 })
  end
end

--- The rendered entry on buffer line `row` (0-based): its cache record and transcript entry.
local function cached_at(row)
  local t = M.transcript
  if not t or cache.transcript ~= t or cache.epoch ~= t.epoch then
    return nil
  end
  for i, cached in ipairs(cache.entries) do
    if row >= cached.start and row < cached.start + cached.count then
      return cached, t.entries[i]
    end
  end
  return nil
end

--- The transcript entry shown on buffer line `row` (0-based), if any.
function M.entry_at(row)
  local _, entry = cached_at(row)
  return entry
end

--- The queued item shown on buffer line `row` (0-based): `{item, kind, index}`, or nil.
function M.queue_item_at(row)
  return (cache.queue_items or {})[row]
end

--- What line `row` (0-based) folds: a tool or a thinking block (nil for other lines).
function M.target_at(row)
  local cached, entry = cached_at(row)
  if not cached then
    return nil
  end
  return cached.targets and cached.targets[row - cached.start], entry
end

--- Fold or unfold what line `row` (0-based) shows: a tool row (its arguments and whole output),
--- a thinking block, a summary or a command's output.
function M.toggle_entry(row)
  local t = M.transcript
  if not t then
    return
  end
  local target, entry = M.target_at(row)
  if target then
    target.expanded = not target.expanded
    t:_touch(entry)
    return M.render()
  end
  if t:toggle(M.entry_at(row)) then
    M.render()
  end
end

--- The panel's text (for tests and screenshots).
function M.lines()
  return valid_buf() and api.nvim_buf_get_lines(M.buf, 0, -1, false) or {}
end

return M
