--- Transcript entries as buffer lines and highlights. Pure functions: no buffer access.
---
--- `M.entry()` and `M.footer()` return `lines, highlights` where a highlight is
--- `{row, col_start, col_end, group}` (0-based row within the returned lines, byte columns,
--- `col_end = -1` for the end of the line).
local M = {}

M.icons = {
  user = "▍",
  assistant = "▍",
  pending = "○",
  asking = "?",
  reviewing = "±",
  running = "◐",
  done = "✓",
  failed = "✗",
  queued = "▸",
  output = "│",
  shell = "▍",
  compaction = "▍",
  folded = "▸",
  unfolded = "▾",
  attachment = "📎",
}

M.status_text = {
  pending = "pending",
  asking = "waiting for permission",
  reviewing = "waiting for your review",
  running = "running",
  done = "done",
  failed = "failed",
}

M.status_group = {
  pending = "AgentlsToolPending",
  asking = "AgentlsToolAsking",
  reviewing = "AgentlsToolAsking",
  running = "AgentlsToolRunning",
  done = "AgentlsToolDone",
  failed = "AgentlsToolFailed",
}

local SUMMARY_ARGS = { "command", "path", "pattern" }

local function lines_of(text)
  text = (text or ""):gsub("\r\n?", "\n")
  return vim.split(text, "\n", { plain = true })
end

local function truncate(text, width)
  if vim.fn.strchars(text) <= width then
    return text
  end
  return vim.fn.strcharpart(text, 0, width - 1) .. "…"
end

--- What a tool call is about, in one line: its command, path or pattern, its newlines and control
--- characters written out (a row waiting for permission must not show a first line that hides the rest).
function M.tool_summary(args)
  if type(args) ~= "table" then
    return ""
  end
  local visible = require("agentls.util").visible
  for _, key in ipairs(SUMMARY_ARGS) do
    if type(args[key]) == "string" then
      return truncate(visible(args[key], true), 60)
    end
  end
  local ok, json = pcall(vim.json.encode, args)
  return ok and json ~= "[]" and json ~= "{}" and truncate(visible(json, true), 60) or ""
end

local function non_empty(lines)
  local kept = {}
  for _, line in ipairs(lines) do
    if line:match("%S") then
      kept[#kept + 1] = line
    end
  end
  return kept
end

--- `lines` without the blank lines at their start and end (those inside stay: a diff's blank
--- context line is a line of the file).
local function trimmed(lines)
  local first, last = 1, #lines
  while first <= last and not lines[first]:match("%S") do
    first = first + 1
  end
  while last >= first and not lines[last]:match("%S") do
    last = last - 1
  end
  return vim.list_slice(lines, first, last)
end

local function tail(lines, count)
  return vim.list_slice(lines, math.max(1, #lines - count + 1), #lines)
end

--- 12345 as "12,345".
local function grouped(number)
  local digits = tostring(math.floor(number)):reverse():gsub("(%d%d%d)", "%1,"):reverse()
  return (digits:gsub("^,", ""))
end

--- How a finished tool's output is summed up under its row: the last lines of a command's
--- output, the size of a listing or of a file read (the file is in the editor), else
--- the first line (e.g. "Edited a.txt (1 replacement):").
M.finished_output = { bash = "tail", read = "count", ls = "count", find = "count", grep = "count", edit = "diff" }

--- The changed lines of a unified diff (`-old`, `+new`), without the file headers.
local function changed_lines(lines)
  local changed = {}
  for _, line in ipairs(lines) do
    if line:match("^[-+]") and not line:match("^%-%-%- ") and not line:match("^%+%+%+ ") then
      changed[#changed + 1] = line
    end
  end
  return changed
end

--- The output lines shown under a folded tool row, and how many lines it leaves out.
local function tool_output(tool, opts)
  local max_lines = opts.tool_output_lines or 5
  local lines = non_empty(lines_of(tool.output))
  if #lines == 0 or max_lines <= 0 then
    return {}, 0
  end
  if tool.status == "failed" then
    return vim.list_slice(lines, 1, max_lines), math.max(0, #lines - max_lines)
  end
  if tool.status == "done" then
    local style = M.finished_output[tool.name] or "first"
    if style == "count" then
      -- the count stands for the lines: no "… N more lines" after it
      return { M.plural(#lines, "line") .. M.toggle_hint(opts, "shows them") }, 0
    elseif style == "diff" then
      local changed = changed_lines(lines)
      if #changed == 0 then
        return { lines[1] }, #lines - 1
      end
      local shown = vim.list_slice(changed, 1, max_lines)
      table.insert(shown, 1, lines[1])
      return shown, #lines - #shown
    elseif style == "first" then
      return { lines[1] }, #lines - 1
    end
  end
  local shown = tail(lines, max_lines)
  return shown, #lines - #shown
end

--- A tool's arguments, one line per argument (a multi-line string over several lines).
local function argument_lines(args)
  local lines = {}
  if type(args) ~= "table" then
    return lines
  end
  local keys = vim.tbl_keys(args)
  table.sort(keys, function(a, b)
    return tostring(a) < tostring(b)
  end)
  for _, key in ipairs(keys) do
    local value = args[key]
    if type(value) == "string" then
      local parts = lines_of(value)
      lines[#lines + 1] = ("%s: %s"):format(key, parts[1])
      for i = 2, #parts do
        lines[#lines + 1] = "  " .. parts[i]
      end
    else
      local ok, json = pcall(vim.json.encode, value)
      lines[#lines + 1] = ("%s: %s"):format(key, ok and json or vim.inspect(value))
    end
  end
  return lines
end

--- What the toggle key does, for the hint of a folded entry: " (<CR> shows it)".
function M.toggle_hint(opts, what)
  local key = opts.keymaps and opts.keymaps.toggle
  return key and (" (%s %s)"):format(key, what) or ""
end

local toggle_hint = M.toggle_hint

--- `1 problem`, `2 problems`.
function M.plural(count, word)
  return ("%d %s%s"):format(count, word, count == 1 and "" or "s")
end

---@class agentls.Builder
local Builder = {}
Builder.__index = Builder

local function builder()
  return setmetatable({ lines = {}, hls = {}, targets = {} }, Builder)
end

--- The last line folds or unfolds `object` (a tool or a thinking block: its `expanded` flag).
function Builder:target(object)
  self.targets[#self.lines - 1] = object
  return self
end

function Builder:line(text, group)
  self.lines[#self.lines + 1] = text
  if group then
    self:hl(0, -1, group)
  end
  return self
end

--- Highlight columns of the last line.
function Builder:hl(col_start, col_end, group)
  self.hls[#self.hls + 1] = { #self.lines - 1, col_start, col_end, group }
  return self
end

function Builder:text(text, indent, group)
  for _, line in ipairs(lines_of(text)) do
    self:line(indent .. line, group)
  end
end

--- An output line under a row.
function Builder:output(text, indent, full)
  text = text:gsub("\t", "  ")
  self:line(indent .. M.icons.output .. " " .. (full and text or truncate(text, 200)), "AgentlsToolOutput")
end

function Builder:tool_row(tool, opts)
  local status = tool.status or "pending"
  local icon = M.icons[status] or M.icons.pending
  local name = tool.name or "tool"
  local summary = M.tool_summary(tool.args)
  local head = "  " .. icon .. " "
  local line = head .. name .. (summary ~= "" and ("  " .. summary) or "")
  local word = M.status_text[status] or status
  self:line(line .. "  · " .. word)
  self:target(tool)
  local group = M.status_group[status] or "AgentlsToolPending"
  self:hl(2, #head, group)
  self:hl(#head, #head + #name, "AgentlsToolName")
  self:hl(#line + 2, -1, group)
  if status == "asking" then
    local permissions = require("agentls.permissions")
    local question = permissions.pending[tool.id]
    if question and permissions.kind(question.params) == "sandbox" then
      local command, note = permissions.sandbox_parts(question.params)
      self:line("    ⚠ the sandbox denied it; run it once OUTSIDE the sandbox, unconfined?", "AgentlsSandboxRefused")
      self:target(tool)
      self:line("      command: " .. command, "AgentlsToolAsking")
      self:target(tool)
      for _, line in ipairs(note) do
        self:line("      " .. line, "AgentlsToolOutput")
        self:target(tool)
      end
    end
    self:line("    " .. M.permission_hint(opts, question and question.params), "AgentlsToolAsking")
    self:target(tool)
  end
  if tool.expanded then
    self:line("    arguments:", "AgentlsHint")
    self:target(tool)
    for _, arg in ipairs(argument_lines(tool.args)) do
      self:line("      " .. arg, "AgentlsToolOutput")
      self:target(tool)
    end
    for _, out in ipairs(trimmed(lines_of(tool.output))) do
      self:output(out, "    ", true)
      self:target(tool)
    end
    return
  end
  local shown, hidden = tool_output(tool, opts)
  for _, out in ipairs(shown) do
    self:output(out, "    ")
    self:target(tool)
  end
  if hidden > 0 then
    local more = M.plural(hidden, "more line")
    local hint = toggle_hint(opts, hidden == 1 and "shows it" or "shows them")
    self:line(("    … %s%s"):format(more, hint), "AgentlsHint")
    self:target(tool)
  end
end

--- The line under a tool waiting for permission: the panel's keys that answer (those of the
--- question's options, when `params`, the agent/requestPermission params, are given).
function M.permission_hint(opts, params)
  local keys = opts.keymaps or {}
  local parts = {}
  local offered = nil
  if type(params) == "table" and type(params.options) == "table" and #params.options > 0 then
    offered = {}
    for _, option in ipairs(params.options) do
      offered[option.id] = option.label or option.id
    end
  end
  local kind = require("agentls.permissions").kind(params)
  if kind ~= "tool" and offered then
    -- a sandbox or budget question: its yes on the allow key, its no on the reject key, in the
    -- request's words
    for _, option in ipairs(params.options) do
      local key = option.id == "reject" and keys.reject or option.id ~= "reject" and keys.allow_once
      if key then
        local label = require("agentls.util").visible(option.label or option.id, true)
        parts[#parts + 1] = key .. " " .. (option.id == "runUnsandboxed" and label:gsub("outside", "OUTSIDE") or label)
      end
    end
    return #parts > 0 and ("waiting for you: " .. table.concat(parts, " · ")) or "waiting for you"
  end
  local trust = type(params) == "table" and params.toolName == "mcp"
  local choices = {
    { "allow_once", "allow once", "allowOnce" },
    { "allow_always", trust and "trust" or "always", "allowAlways" },
    { "allow_server", "every tool of the server", "allowAlwaysServer" },
    { "reject", "reject", "reject" },
  }
  for _, pair in ipairs(choices) do
    local shown = offered == nil and pair[3] ~= "allowAlwaysServer" or (offered ~= nil and offered[pair[3]] ~= nil)
    if keys[pair[1]] and shown then
      parts[#parts + 1] = keys[pair[1]] .. " " .. pair[2]
    end
  end
  return #parts > 0 and ("waiting for you: " .. table.concat(parts, " · ")) or "waiting for you"
end

--- A summary, folded to one line unless `expanded`.
function Builder:summary(text, expanded, opts)
  local lines = non_empty(lines_of(text))
  if expanded then
    self:line(("  %s summary%s"):format(M.icons.unfolded, toggle_hint(opts, "folds it")), "AgentlsHint")
    self:text(vim.trim(text or ""), "  ")
    return
  end
  -- the first line that says something: summaries start with a heading ("## Goal")
  local first = vim.tbl_filter(function(line)
    return not line:match("^%s*#")
  end, lines)[1] or lines[1]
  first = first and truncate(vim.trim(first), 60) or "(empty)"
  local count = #lines == 1 and "1 line" or ("%d lines"):format(#lines)
  local hint = toggle_hint(opts, "shows it")
  self:line(("  %s summary, %s: %s%s"):format(M.icons.folded, count, first, hint), "AgentlsHint")
end

M.compaction_reason = { threshold = "automatic", overflow = "after a context overflow", manual = "manual" }

local function render_compaction(b, entry, opts)
  local parts = { "Compaction" }
  parts[#parts + 1] = M.compaction_reason[entry.reason]
  if entry.tokens_before and entry.tokens_after then
    parts[#parts + 1] = ("%s → %s tokens"):format(grouped(entry.tokens_before), grouped(entry.tokens_after))
  elseif entry.tokens_before then
    parts[#parts + 1] = ("%s tokens before"):format(grouped(entry.tokens_before))
  end
  b:heading(M.icons.compaction, table.concat(parts, " · "), "AgentlsCompactionHeading")
  if entry.status == "running" then
    b:line("  " .. M.icons.running .. " summarising the conversation…", "AgentlsToolRunning")
  elseif entry.status == "failed" then
    b:text(M.icons.failed .. " " .. (entry.error_message or "failed"), "  ", "AgentlsError")
  elseif entry.status == "aborted" then
    b:line("  ⊘ aborted: the session is as it was", "AgentlsNotice")
  else
    b:summary(entry.summary, entry.expanded, opts)
  end
end

local function bash_status(entry)
  if entry.status == "running" then
    return "running", "AgentlsToolRunning"
  elseif entry.status == "cancelled" then
    return "cancelled", "AgentlsNotice"
  elseif entry.lost then
    return "failed: " .. entry.lost, "AgentlsToolFailed"
  elseif entry.error then
    return "not run: " .. lines_of(entry.error)[1], "AgentlsToolFailed"
  elseif entry.exit_code then
    return "exit " .. entry.exit_code, entry.exit_code == 0 and "AgentlsToolDone" or "AgentlsToolFailed"
  end
  return "failed", "AgentlsToolFailed"
end

--- A command the user ran: `$ command · exit 0`, then the end of its output (all of it when expanded).
local function render_bash(b, entry, opts)
  local head = M.icons.shell .. "$ " .. truncate(lines_of(entry.command or "?")[1], 80)
  local status, group = bash_status(entry)
  local line = head .. "  · " .. status
  b:line(line .. (entry.exclude and " · not sent to the model" or ""))
  b:hl(0, #head, "AgentlsShellHeading")
  b:hl(#head + 2, #line, group)
  if entry.exclude then
    b:hl(#line, -1, "AgentlsHint")
  end
  local lines = non_empty(lines_of(entry.output))
  local shown = entry.expanded and lines or tail(lines, opts.tool_output_lines or 5)
  if #shown < #lines then
    local earlier = #lines - #shown
    local hint = toggle_hint(opts, earlier == 1 and "shows it" or "shows them")
    b:line(("  … %s%s"):format(M.plural(earlier, "earlier line"), hint), "AgentlsHint")
  end
  for _, out in ipairs(shown) do
    b:output(out, "  ")
  end
  if entry.truncated then
    local where = entry.full_output_path and ("; all of it is in " .. entry.full_output_path) or ""
    b:line("  … the output was cut" .. where, "AgentlsHint")
  end
end

--- A thinking block: a label, then the text (folded to the label once the message is done,
--- unless unfolded).
function Builder:thinking(block, streaming, opts)
  local lines = non_empty(lines_of(block.text))
  if streaming or block.expanded then
    local hint = streaming and "" or toggle_hint(opts, "folds it")
    self:line(("  %s Thinking%s"):format(M.icons.unfolded, hint), "AgentlsThinkingLabel")
    self:target(block)
    for _, line in ipairs(lines_of(vim.trim(block.text))) do
      self:line("  " .. line, "AgentlsThinking")
      self:target(block)
    end
    return
  end
  local count = #lines == 1 and "1 line" or ("%d lines"):format(#lines)
  self:line(("  %s Thinking · %s%s"):format(M.icons.folded, count, toggle_hint(opts, "shows it")), "AgentlsThinkingLabel")
  self:target(block)
end

function Builder:heading(icon, label, group)
  self:line(icon .. label)
  self:hl(0, -1, group)
end

local function render_assistant(b, entry, transcript, opts)
  b:heading(M.icons.assistant, "Assistant", "AgentlsAssistantHeading")
  for _, block in ipairs(entry.blocks or {}) do
    if block.type == "text" and block.text ~= "" then
      b:text(block.text, "  ")
    elseif block.type == "thinking" and block.text ~= "" then
      b:thinking(block, entry.stop_reason == "pending", opts)
    elseif block.type == "toolCall" then
      if block.id and block.name then
        local tool = transcript.tools[block.id] or { name = block.name, args = block.args, status = "pending" }
        b:tool_row(tool, opts)
      else
        b:line("  " .. M.icons.pending .. " preparing a tool call…", "AgentlsToolPending")
      end
    end
  end
  if entry.stop_reason == "error" then
    b:text("✗ " .. (entry.error_message or "error"), "  ", "AgentlsError")
  elseif entry.stop_reason == "aborted" then
    b:line("  ⊘ aborted", "AgentlsNotice")
  elseif entry.stop_reason == "length" then
    b:line("  … cut short: the output token limit", "AgentlsNotice")
  end
end

--- `3`, or `3-4`.
function M.lines_label(first, last)
  return first == last and tostring(first) or ("%d-%d"):format(first, last)
end

local plural, lines_label = M.plural, M.lines_label

--- The chip of an attachment of an `editorContext` message's `details`
--- (`calc.py:3-4`, `README.md`, `2 problems`).
function M.chip(detail)
  if type(detail) ~= "table" then
    return "?"
  end
  local path = type(detail.path) == "string" and detail.path ~= "" and detail.path or nil
  local label
  if detail.type == "selection" then
    local first = tonumber(detail.startLine)
    local last = tonumber(detail.endLine) or first
    local range = type(detail.range) == "table" and detail.range or {}
    if not first and type(range.start) == "table" and tonumber(range.start.line) then
      first = range.start.line + 1
      local finish = type(range["end"]) == "table" and range["end"] or range.start
      last = math.max(first, (tonumber(finish.line) or 0) + (finish.character == 0 and 0 or 1))
    end
    label = (path or "selection") .. (first and (":" .. lines_label(first, last)) or "")
  elseif detail.type == "diagnostics" then
    local count = tonumber(detail.count)
    label = count and plural(count, "problem") or "problems"
    if path then
      label = label .. " in " .. path
    end
  else
    label = path or tostring(detail.type or "?")
  end
  if detail.truncated == true then
    label = label .. " (cut)"
  end
  return label
end

--- The chips of a message's attachments: `📎 calc.py:3-4 · README.md · 2 problems`.
function M.chips(labels)
  return M.icons.attachment .. " " .. table.concat(labels, " · ")
end

--- The chips line of the `details.attachments` of an `editorContext` message.
function Builder:chips(attachments, indent)
  self:line(indent .. M.chips(vim.tbl_map(M.chip, attachments)), "AgentlsAttachment")
end

--- One entry's lines (a blank line after it).
function M.entry(entry, transcript, opts)
  opts = opts or {}
  local b = builder()
  if entry.kind == "user" then
    b:heading(M.icons.user, "You", "AgentlsUserHeading")
    b:text(entry.text, "  ")
    if entry.attachments and #entry.attachments > 0 then
      b:chips(entry.attachments, "  ")
    end
  elseif entry.kind == "context" then
    b:heading(M.icons.user, "Editor context", "AgentlsCustomHeading")
    b:chips(entry.attachments or {}, "  ")
  elseif entry.kind == "assistant" then
    render_assistant(b, entry, transcript, opts)
  elseif entry.kind == "tool" then
    b:tool_row(transcript.tools[entry.id] or { status = "pending" }, opts)
  elseif entry.kind == "bash" then
    render_bash(b, entry, opts)
  elseif entry.kind == "compaction" then
    render_compaction(b, entry, opts)
  elseif entry.kind == "branch" then
    b:heading(M.icons.compaction, "Branch summary", "AgentlsCompactionHeading")
    b:summary(entry.summary, entry.expanded, opts)
  elseif entry.kind == "custom" then
    b:heading(M.icons.user, entry.role, "AgentlsCustomHeading")
    b:text(entry.text, "  ", "AgentlsThinking")
  elseif entry.kind == "notice" then
    local group = entry.level == "error" and "AgentlsError" or "AgentlsNotice"
    b:text(entry.text, "", group)
  end
  b:line("")
  return b.lines, b.hls, b.targets
end

--- A context file as the panel names it: relative to the session's folder when it is inside.
local function context_path(path, cwd)
  if cwd and path:sub(1, #cwd + 1) == cwd .. "/" then
    return path:sub(#cwd + 2)
  end
  return vim.fn.fnamemodify(path, ":~")
end

--- The lines before the entries: the project instructions (`AGENTS.md`...) the agent reads.
function M.header(transcript)
  local b = builder()
  local files = transcript and transcript.context_files or {}
  if #files > 0 then
    local names = vim.tbl_map(function(path)
      return context_path(path, transcript.cwd)
    end, files)
    b:line("Context: " .. table.concat(names, ", "), "AgentlsHint")
    b:line("")
  end
  return b.lines, b.hls
end

--- A queued item: its first line, and how many attachments go with it.
local function queue_line(kind, item)
  local count = type(item.context) == "table" and #item.context or 0
  local attached = count > 0 and ("  %s %d"):format(M.icons.attachment, count) or ""
  return ("%s %s: %s%s"):format(M.icons.queued, kind, lines_of(item.text)[1], attached)
end

--- The line of the attachments waiting for the next message (`pending`: their labels).
function M.pending_line(pending)
  return ("%s next message: %s  (:AgentClearContext)"):format(M.icons.attachment, table.concat(pending, " · "))
end

--- The line of the reviews waiting for the user (`reviews`: {toolName, path, shown}).
function M.review_line(reviews)
  local first = reviews[1]
  local more = #reviews > 1 and (" (+%d more)"):format(#reviews - 1) or ""
  return ("%s review waiting: %s %s%s  (:AgentAccept · :AgentReject [reason] · :AgentReview)"):format(
    M.icons.reviewing,
    first.toolName or "edit",
    first.path or "?",
    more
  )
end

--- The lines after the entries: the trust questions waiting, the queue, the reviews waiting,
--- the pending attachments, and a hint when there is nothing yet. The third result maps a
--- line (0-based) of the queue to its item: `{item, kind = "steering"|"followUp", index
--- (1-based, in its queue)}`; the fourth a line of a trust question to its id.
---@param questions {id: string, params: table}[]? the trust questions (permissions.trust_questions)
function M.footer(transcript, pending, reviews, questions, opts)
  local b = builder()
  local items, asking = {}, {}
  local visible = require("agentls.util").visible
  for _, question in ipairs(questions or {}) do
    local title = visible(question.params.title or "Trust this folder?", true)
    b:line(("%s %s"):format(M.icons.asking, title), "AgentlsToolAsking")
    asking[#b.lines - 1] = question.id
    local detail = require("agentls.permissions").budget_detail(question.params)
    if require("agentls.permissions").kind(question.params) == "budget" and detail then
      b:line("    " .. detail, "AgentlsToolAsking")
      asking[#b.lines - 1] = question.id
    end
    b:line("    " .. M.permission_hint(opts or {}, question.params), "AgentlsToolAsking")
    asking[#b.lines - 1] = question.id
  end
  if #transcript.entries == 0 and not transcript.running then
    b:line("Ask the agent with :AgentPrompt {text}.", "AgentlsHint")
  end
  for _, queue in ipairs({ { "steering", "steer" }, { "followUp", "follow-up" } }) do
    for index, item in ipairs(transcript.queue[queue[1]] or {}) do
      b:line(queue_line(queue[2], item), "AgentlsQueue")
      items[#b.lines - 1] = { item = item, kind = queue[1], index = index }
    end
  end
  if reviews and #reviews > 0 then
    b:line(M.review_line(reviews), "AgentlsToolAsking")
  elseif transcript.running then
    b:line("◌ working…", "AgentlsHint")
  end
  if pending and #pending > 0 then
    b:line(M.pending_line(pending), "AgentlsAttachment")
  end
  return b.lines, b.hls, items, asking
end

--- The panel window's winbar, fitted to `width` columns: status, a refused or unconfined
--- sandbox, permission preset, an enforced sandbox, the spend against the budget, model,
--- queue, pending attachments, thinking level, session, figures (shortened or dropped in the
--- reverse order of their use when the window is narrow: the session's id and the figures go
--- first, the sandbox badge and the spend are shortened early and dropped late).
function M.winbar(transcript, pending, width)
  local parts = { { text = " agentls", group = "AgentlsWinbar", keep = math.huge, required = true } }
  local function add(text, keep, group, short)
    parts[#parts + 1] = { text = text, keep = keep, group = group, short = short }
  end
  local attached = pending and #pending > 0 and ("%s %d"):format(M.icons.attachment, #pending) or nil
  if not transcript then
    add("no session", 100)
    parts[#parts].required = true
    if attached then
      add(attached, 60)
    end
    return require("agentls.winbar").fit(parts, width or vim.o.columns)
  end
  if transcript.model then
    add(transcript.model.provider .. "/" .. transcript.model.id, 80, nil, transcript.model.id)
  end
  local preset = transcript:preset()
  if preset then
    add(preset.name, 90, preset.id == "bypass" and "AgentlsNotice" or nil)
  end
  add(transcript.session_id:sub(1, 8), 20)
  local status = transcript.status or "idle"
  local group = ({ running = "AgentlsToolRunning", error = "AgentlsToolFailed", aborted = "AgentlsNotice" })[status]
  add(status, 100, group)
  parts[#parts].required = true
  local queued = #(transcript.queue.steering or {}) + #(transcript.queue.followUp or {})
  if queued > 0 then
    add(("%d queued"):format(queued), 70)
  end
  if transcript.thinking_level and transcript.thinking_level ~= "off" then
    add("thinking " .. transcript.thinking_level, 40)
  end
  local sandbox = M.sandbox_badge(transcript.sandbox)
  if sandbox then
    add(sandbox.text, sandbox.keep, sandbox.group, sandbox.short)
    parts[#parts].short_keep = sandbox.short_keep
  end
  local budget = M.budget_spend(transcript.budget)
  if budget then
    add(budget.text, 82, budget.reached and "AgentlsNotice" or "AgentlsHint", budget.short)
    parts[#parts].short_keep = 25
  end
  for _, figure in ipairs(M.stats_parts(transcript.stats)) do
    add(figure.text, figure.keep, "AgentlsHint")
  end
  if attached then
    add(attached, 60)
  end
  return require("agentls.winbar").fit(parts, width or vim.o.columns)
end

local SANDBOX_SHORT = { ["workspace-write"] = "ws", ["read-only"] = "ro" }

--- The winbar's sandbox badge for `agent/getState`'s `sandbox`: `{text, short, group, keep,
--- short_keep}`; nil when it is off (or from a server without the sandbox). Enforced: "sandbox:
--- workspace-write, no network" ("sandbox:ws no-net"); refused (the agent's commands do not
--- run): "sandbox refused: workspace-write"; unconfined (the fallback runs them unconfined):
--- "unsandboxed: workspace-write not enforced". Refused and unconfined have highlights of their
--- own and are the last to go.
function M.sandbox_badge(sandbox)
  if type(sandbox) ~= "table" or type(sandbox.status) ~= "string" or sandbox.status == "off" then
    return nil
  end
  local visible = require("agentls.util").visible
  local mode = visible(tostring(sandbox.mode or "?"), true)
  local short_mode = SANDBOX_SHORT[sandbox.mode] or mode
  if sandbox.status == "enforced" then
    return {
      text = ("sandbox: %s, %s"):format(mode, sandbox.network and "network" or "no network"),
      short = ("sandbox:%s %s"):format(short_mode, sandbox.network and "net" or "no-net"),
      group = "AgentlsSandbox",
      keep = 85,
      short_keep = 30,
    }
  elseif sandbox.status == "refused" then
    return { text = "sandbox refused: " .. mode, short = "sandbox refused", group = "AgentlsSandboxRefused", keep = 95,
      short_keep = 50 }
  elseif sandbox.status == "unconfined" then
    return { text = ("unsandboxed: %s not enforced"):format(mode), short = "unsandboxed", group = "AgentlsSandboxUnconfined",
      keep = 95, short_keep = 50 }
  end
  return { text = "sandbox: " .. visible(sandbox.status, true), group = "AgentlsHint", keep = 50 }
end

local BUDGET_ORDER = { { "maxCostUsd", "costUsd" }, { "maxTurns", "turns" }, { "maxTokens", "tokens" } }

--- A limit's spend: "$0.12/$1.00", "3/10 turns", "1.2k/50.0k tokens".
function M.spend_text(kind, used, limit)
  local amount = require("agentls.transcript").budget_amount
  if kind == "maxCostUsd" then
    return amount(kind, used) .. "/" .. amount(kind, limit)
  end
  return amount(kind, used):match("^%S+") .. "/" .. amount(kind, limit)
end

--- The winbar's spend against the budget (`agent/getState`'s `budget`): `{text, short, reached}`,
--- "$0.12/$1.00 3/10 turns" (the run's limits against what the current or last run spent, then
--- "session …" against the session's); `short`: the limit nearest to being reached. nil
--- without limits.
function M.budget_spend(budget)
  if type(budget) ~= "table" or type(budget.limits) ~= "table" then
    return nil
  end
  local texts, reached, nearest, nearest_ratio = {}, false, nil, -1
  local scopes = { { "", budget.limits, budget.run }, { "session ", budget.limits.session, budget.session } }
  for _, scope in ipairs(scopes) do
    local limits, spent = scope[2], type(scope[3]) == "table" and scope[3] or {}
    for _, kind in ipairs(BUDGET_ORDER) do
      local limit = type(limits) == "table" and tonumber(limits[kind[1]]) or nil
      if limit and limit > 0 then
        local used = tonumber(spent[kind[2]]) or 0
        local text = scope[1] .. M.spend_text(kind[1], used, limit)
        texts[#texts + 1] = text
        reached = reached or used >= limit
        if used / limit > nearest_ratio then
          nearest, nearest_ratio = text, used / limit
        end
      end
    end
  end
  if #texts == 0 then
    return nil
  end
  local text = table.concat(texts, " ")
  return { text = text, short = #texts > 1 and nearest or nil, reached = reached }
end

--- 12345 as "12.3k", 1234567 as "1.2M".
local function short(number)
  if number >= 1e6 then
    return ("%.1fM"):format(number / 1e6)
  elseif number >= 1e3 then
    return ("%.1fk"):format(number / 1e3)
  end
  return tostring(math.floor(number))
end

--- `agent/getStats` as the winbar's figures, "12.3k tokens", "$0.012", "context 5% of 200k":
--- `{text, keep}` (how useful each is: the context's fill first).
function M.stats_parts(stats)
  if type(stats) ~= "table" then
    return {}
  end
  local parts = {}
  local tokens = type(stats.tokens) == "table" and tonumber(stats.tokens.total)
  if tokens then
    parts[#parts + 1] = { text = short(tokens) .. " tokens", keep = 10 }
  end
  local cost = tonumber(stats.cost)
  if cost and cost > 0 then
    parts[#parts + 1] = { text = ("$%.3f"):format(cost), keep = 15 }
  end
  local context = type(stats.context) == "table" and stats.context or {}
  local percent, window = tonumber(context.percent), tonumber(context.contextWindow)
  if percent and window then
    parts[#parts + 1] = { text = ("context %d%% of %s"):format(math.floor(percent + 0.5), short(window)), keep = 30 }
  elseif tonumber(context.tokens) then
    parts[#parts + 1] = { text = ("context %s"):format(short(tonumber(context.tokens))), keep = 30 }
  end
  return parts
end

return M
