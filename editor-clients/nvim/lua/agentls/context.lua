--- Editor context: what the user points at (a selection, a file, the diagnostics), attached to
--- the next prompt, steering or follow-up message as its `context` (protocol.md, "Editor
--- context"), and the answer to the server's `agent/getDiagnostics`.
---
--- Attachments wait in `M.pending` until a message is sent; `@path` mentions of workspace
--- files in the message's text add a `file` attachment for that message only.
local config = require("agentls.config")
local render = require("agentls.render")

local api = vim.api
local levels = vim.log.levels
local M = {}

local has_011 = vim.fn.has("nvim-0.11") == 1

---@class agentls.Pending
---@field attachment table what is sent: {type, uri?, range?}
---@field label string how the panel and the prompt name it

---@type agentls.Pending[]
M.pending = {}

local notify = require("agentls.util").notify

--- The pending attachments changed: the panel shows them.
local function changed()
  require("agentls.panel").schedule()
end

-- Positions ------------------------------------------------------------------------------

--- The position encoding negotiated with the server (UTF-16 until it has answered).
function M.encoding()
  local c = require("agentls.client").get()
  return c and c.offset_encoding or "utf-16"
end

--- Byte column `byte` (0-based) of `line` in `encoding`'s code units.
function M.char_index(line, byte, encoding)
  byte = math.max(0, math.min(byte, #line))
  if encoding == "utf-8" or byte == 0 then
    return byte
  end
  if has_011 then
    return vim.str_utfindex(line, encoding == "utf-32" and "utf-32" or "utf-16", byte, false)
  end
  local ok, utf32, utf16 = pcall(vim.str_utfindex, line, byte)
  if not ok then
    return byte
  end
  return encoding == "utf-32" and utf32 or utf16
end

--- The text of line `lnum` (0-based) of `bufnr`, or nil past its end.
local function buf_line(bufnr, lnum)
  if lnum < 0 or lnum >= api.nvim_buf_line_count(bufnr) then
    return nil
  end
  return api.nvim_buf_get_lines(bufnr, lnum, lnum + 1, false)[1]
end

--- An LSP position of byte column `col` on line `lnum` (both 0-based) of `bufnr`.
function M.position(bufnr, lnum, col, encoding)
  local line = buf_line(bufnr, lnum)
  return { line = lnum, character = line and M.char_index(line, col, encoding) or col }
end

-- Paths ----------------------------------------------------------------------------------

local function in_workspace(path)
  local root = config.root_dir()
  return path == root or path:sub(1, #root + 1) == root .. "/"
end

local function outside_allowed()
  return (config.options.init_options or {}).allowOutsideWorkspace == true
end

--- `path` relative to the workspace when it is inside, else with `~`.
function M.relative(path)
  local root = config.root_dir()
  if path:sub(1, #root + 1) == root .. "/" then
    return path:sub(#root + 2)
  end
  return vim.fn.fnamemodify(path, ":~")
end

local function uri_path(uri)
  local ok, fname = pcall(vim.uri_to_fname, uri)
  return ok and vim.fs.normalize(fname) or uri
end

--- The absolute path of a file `name` (relative to `base`, default the current directory).
local function absolute(name, base)
  name = vim.fn.expand(name)
  if base and not name:match("^/") then
    name = base .. "/" .. name
  end
  return vim.fs.normalize(vim.fn.fnamemodify(name, ":p"))
end

local function is_file(path)
  return vim.fn.filereadable(path) == 1 and vim.fn.isdirectory(path) == 0
end

-- Labels ---------------------------------------------------------------------------------

local plural, lines_label = render.plural, render.lines_label

--- The label of an attachment before it is sent.
function M.label(attachment)
  local path = attachment.uri and M.relative(uri_path(attachment.uri)) or nil
  if attachment.type == "selection" then
    local range = attachment.range
    local last = range["end"].line
    if last > range.start.line and range["end"].character == 0 then
      last = last - 1 -- a line-wise selection ending at the start of the next line
    end
    return ("%s:%s"):format(path, lines_label(range.start.line + 1, last + 1))
  elseif attachment.type == "diagnostics" then
    return path and ("problems in " .. path) or "all problems"
  end
  return path
end

--- The labels of the pending attachments.
function M.labels()
  return vim.tbl_map(function(item)
    return item.label
  end, M.pending)
end

-- Pending attachments --------------------------------------------------------------------

--- Add an attachment to the next message (once: the same one twice is kept once).
function M.add(attachment)
  for _, item in ipairs(M.pending) do
    if vim.deep_equal(item.attachment, attachment) then
      notify(("%s is already attached"):format(item.label))
      return false
    end
  end
  local label = M.label(attachment)
  M.pending[#M.pending + 1] = { attachment = attachment, label = label }
  notify(("attached %s to the next message (%s pending)"):format(label, #M.pending))
  changed()
  return true
end

--- :AgentClearContext
function M.clear()
  local count = #M.pending
  M.pending = {}
  changed()
  notify(count == 0 and "no context was attached" or ("removed %s"):format(plural(count, "attachment")))
end

--- The current buffer as a workspace file the server can read, or nil after telling the user.
local function current_file(what)
  local bufnr = api.nvim_get_current_buf()
  local name = api.nvim_buf_get_name(bufnr)
  if vim.bo[bufnr].buftype ~= "" or name == "" or name:match("^%a[%w+.-]*://") then
    notify(("cannot attach %s: the current buffer is not a file"):format(what), levels.ERROR)
    return nil
  end
  local path = absolute(name)
  if not in_workspace(path) and not outside_allowed() then
    notify(("cannot attach %s: %s is outside the workspace %s"):format(what, path, config.root_dir()), levels.ERROR)
    return nil
  end
  return bufnr, path
end

--- :[range]AgentAddSelection: the lines of the range, or the characters of the last visual
--- selection when the range is that (character-wise) selection.
function M.add_selection(line1, line2, range)
  local bufnr = current_file("a selection")
  if not bufnr then
    return
  end
  if not range or range == 0 then
    line1 = api.nvim_win_get_cursor(0)[1]
    line2 = line1
  end
  local encoding = M.encoding()
  local first, last = line1 - 1, line2 - 1
  local start_col, end_col = 0, #(buf_line(bufnr, last) or "")
  local vstart, vend = vim.fn.getpos("'<"), vim.fn.getpos("'>")
  if range == 2 and vim.fn.visualmode() == "v" and vstart[2] == line1 and vend[2] == line2 then
    start_col = vstart[3] - 1
    local line = buf_line(bufnr, last) or ""
    local last_char = vend[3] -- 1-based byte of the last selected character's first byte
    if last_char <= #line then
      -- include all of the last character's bytes
      end_col = last_char - 1 + #vim.fn.strcharpart(line:sub(last_char), 0, 1)
    end
  end
  M.add({
    type = "selection",
    uri = vim.uri_from_fname(absolute(api.nvim_buf_get_name(bufnr))),
    range = {
      start = M.position(bufnr, first, start_col, encoding),
      ["end"] = M.position(bufnr, last, end_col, encoding),
    },
  })
end

--- :AgentAddFile [path]: a file (the current buffer's without a path).
function M.add_file(name)
  name = vim.trim(name or "")
  local path
  if name == "" then
    local _
    _, path = current_file("the file")
    if not path then
      return
    end
  else
    path = absolute(name)
    if not is_file(path) then
      return notify(("cannot attach %s: no such file"):format(name), levels.ERROR)
    end
    if not in_workspace(path) and not outside_allowed() then
      return notify(("cannot attach %s: it is outside the workspace %s"):format(path, config.root_dir()), levels.ERROR)
    end
  end
  M.add({ type = "file", uri = vim.uri_from_fname(path) })
end

--- :AgentAddDiagnostics[!]: the problems of the current buffer (of every document with `all`).
function M.add_diagnostics(all)
  if all then
    return M.add({ type = "diagnostics" })
  end
  local _, path = current_file("its diagnostics")
  if path then
    M.add({ type = "diagnostics", uri = vim.uri_from_fname(path) })
  end
end

-- @path mentions -------------------------------------------------------------------------

--- The workspace file a mention `@name` means, or nil (trailing punctuation is not part of it).
local function mentioned_file(name)
  local root = config.root_dir()
  while name ~= "" do
    local path = absolute(name, root)
    if is_file(path) and (in_workspace(path) or outside_allowed()) then
      return path
    end
    local shorter = name:gsub("[%.,;:!%?%)%]}'\"`]$", "")
    if shorter == name then
      return nil
    end
    name = shorter
  end
  return nil
end

--- `file` attachments of the `@path` mentions of existing files in `text`.
function M.mentions(text)
  local found, seen = {}, {}
  for name in (text or ""):gmatch("%f[%S]@(%S+)") do
    local path = mentioned_file(name)
    if path and not seen[path] then
      seen[path] = true
      found[#found + 1] = { type = "file", uri = vim.uri_from_fname(path) }
    end
  end
  return found
end

--- The `context` of a message with `text`: the pending attachments and its mentions (nil when
--- there are none), and a function to call once the server took it (it clears those pending).
---@return table[]? context, fun() sent
function M.take(text)
  local taken = vim.list_slice(M.pending)
  local context = {}
  for _, item in ipairs(taken) do
    context[#context + 1] = item.attachment
  end
  for _, attachment in ipairs(M.mentions(text)) do
    local duplicate = vim.tbl_contains(context, function(other)
      return vim.deep_equal(other, attachment)
    end, { predicate = true })
    if not duplicate then
      context[#context + 1] = attachment
    end
  end
  local function sent()
    if #taken == 0 then
      return
    end
    M.pending = vim.tbl_filter(function(item)
      return not vim.tbl_contains(taken, item)
    end, M.pending)
    changed()
  end
  return #context > 0 and context or nil, sent
end

-- @ completion ---------------------------------------------------------------------------

local SKIP_DIRS = { [".git"] = true, node_modules = true, [".venv"] = true, __pycache__ = true }
local MAX_VISITED = 5000
local MAX_MATCHES = 50

--- Workspace paths (relative, directories ending in `/`) that complete `typed`: the entries of
--- its folder starting with its last part; for a bare name also files anywhere below whose
--- name starts with it.
function M.complete_path(typed)
  local root = config.root_dir()
  local dir, base = typed:match("^(.*/)([^/]*)$")
  dir, base = dir or "", base or typed
  local matches, seen = {}, {}
  local function add(path)
    if not seen[path] and #matches < MAX_MATCHES then
      seen[path] = true
      matches[#matches + 1] = path
    end
  end
  local folder = dir == "" and root or absolute(dir, root)
  if vim.fn.isdirectory(folder) == 1 then
    local entries = {}
    for name, kind in vim.fs.dir(folder) do
      if name:find(base, 1, true) == 1 and (base:sub(1, 1) == "." or name:sub(1, 1) ~= ".") then
        entries[#entries + 1] = dir .. name .. ((kind == "directory") and "/" or "")
      end
    end
    table.sort(entries)
    for _, path in ipairs(entries) do
      add(path)
    end
  end
  if dir == "" and base ~= "" then
    local visited, below = 0, {}
    for path, kind in
      vim.fs.dir(root, {
        depth = 8,
        skip = function(path) -- false: do not descend
          local name = vim.fs.basename(path)
          return not SKIP_DIRS[name] and name:sub(1, 1) ~= "."
        end,
      })
    do
      visited = visited + 1
      if visited > MAX_VISITED then
        break
      end
      if kind == "file" and path:find("/", 1, true) and vim.fs.basename(path):find(base, 1, true) == 1 then
        below[#below + 1] = path
      end
    end
    table.sort(below)
    for _, path in ipairs(below) do
      add(path)
    end
  end
  return matches
end

-- agent/getDiagnostics -------------------------------------------------------------------

--- A `vim.diagnostic` item as an LSP Diagnostic, positions in `encoding`.
function M.lsp_diagnostic(bufnr, d, encoding)
  local end_lnum = d.end_lnum or d.lnum
  local end_col = d.end_col or d.col
  local lsp = type(d.user_data) == "table" and type(d.user_data.lsp) == "table" and d.user_data.lsp or {}
  local code = d.code
  if code == nil then
    code = lsp.code
  end
  return {
    range = {
      start = M.position(bufnr, d.lnum, d.col or 0, encoding),
      ["end"] = M.position(bufnr, end_lnum, end_col or 0, encoding),
    },
    severity = d.severity,
    message = d.message,
    source = type(d.source) == "string" and d.source or nil,
    code = (type(code) == "string" or type(code) == "number") and code or nil,
  }
end

--- The diagnostics of `bufnr` as LSP Diagnostics.
local function buffer_items(bufnr, encoding)
  local items = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    items[#items + 1] = M.lsp_diagnostic(bufnr, d, encoding)
  end
  return items
end

local function file_buffer_uri(bufnr)
  local name = api.nvim_buf_get_name(bufnr)
  if name == "" or vim.bo[bufnr].buftype ~= "" or name:match("^%a[%w+.-]*://") then
    return nil
  end
  return vim.uri_from_fname(absolute(name))
end

--- The answer to `agent/getDiagnostics {uris?}`: the diagnostics of the buffers of `uris`
--- (none for a document that is not loaded), or of every file buffer that has some.
function M.get_diagnostics(params)
  local encoding = M.encoding()
  local result = {}
  local uris = type(params) == "table" and params.uris
  if type(uris) == "table" then
    local loaded_buffer = require("agentls.edits").loaded_buffer
    for _, uri in ipairs(uris) do
      local bufnr = type(uri) == "string" and loaded_buffer(uri)
      result[#result + 1] = { uri = uri, items = bufnr and buffer_items(bufnr, encoding) or {} }
    end
  else
    local buffers = {}
    for _, d in ipairs(vim.diagnostic.get(nil)) do
      if d.bufnr and not buffers[d.bufnr] and api.nvim_buf_is_valid(d.bufnr) then
        buffers[d.bufnr] = true
        local uri = file_buffer_uri(d.bufnr)
        if uri then
          result[#result + 1] = { uri = uri, items = buffer_items(d.bufnr, encoding) }
        end
      end
    end
  end
  return { diagnostics = result }
end

return M
