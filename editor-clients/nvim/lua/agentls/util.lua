--- What several modules share: notifications, and the scratch buffers of the panel, the prompt,
--- :AgentTree and :AgentMcp (a hidden `nofile` buffer, its keys, a split below to show it in).
local api = vim.api
local levels = vim.log.levels
local M = {}

--- `message` on one line: a message of several lines makes Neovim wait for "Press ENTER"
--- in the code window; its lines are joined with " · ".
function M.one_line(message)
  local text = vim.trim(tostring(message):gsub("\r\n?", "\n"))
  return (text:gsub("%s*\n[%s\n]*", " · "))
end

--- A notification, "agentls: " and `message` on one line.
function M.notify(message, level)
  vim.notify("agentls: " .. M.one_line(message), level or levels.INFO)
end

local NAMES = { ["\t"] = "\\t", ["\n"] = "\\n", ["\r"] = "\\r" }

--- The code point of a 2- or 3-byte UTF-8 sequence.
local function codepoint(sequence)
  local a, b, c = sequence:byte(1, -1)
  if c then
    return (a % 16) * 4096 + (b % 64) * 64 + (c % 64)
  end
  return (a % 32) * 64 + (b % 64)
end

local function escaped(code)
  return code < 0x100 and ("\\x%02x"):format(code) or ("\\u%04x"):format(code)
end

--- The UTF-8 of C1 controls, bidi marks, overrides and isolates, zero-width characters, line
--- separators and the BOM.
local HIDDEN_SEQUENCES = {
  "\194[\128-\159]",
  "\216\156",
  "\226\128[\139-\143\168-\174]",
  "\226\129[\160-\164\166-\169]",
  "\239\187\191",
}

--- `text` with the characters that could hide or reorder what it shows written out (`\r`,
--- `\x1b`, `\u202e`): C0 controls (but tab and newline, unless `one_line`), DEL, and the
--- sequences above. A message (`vim.notify`, a picker's prompt) obeys a `\r`; untrusted text
--- (the model's command, an MCP server's label) goes through this first.
function M.visible(text, one_line)
  text = tostring(text):gsub("[%z\1-\31\127]", function(char)
    if not one_line and (char == "\n" or char == "\t") then
      return char
    end
    return NAMES[char] or escaped(char:byte())
  end)
  for _, pattern in ipairs(HIDDEN_SEQUENCES) do
    text = text:gsub(pattern, function(sequence)
      return escaped(codepoint(sequence))
    end)
  end
  return text
end

--- A request's error, as an error notification.
function M.fail(err)
  M.notify(require("agentls.client").error_text(err), levels.ERROR)
end

--- vim.ui.select; `callback(item)` only when the user picked one.
function M.select(items, opts, callback)
  vim.ui.select(items, opts, function(choice)
    if choice then
      callback(choice)
    end
  end)
end

--- A new unlisted `nofile` buffer named `name`, hidden when left, without a swap file.
function M.new_scratch(name)
  local buf = api.nvim_create_buf(false, true)
  api.nvim_buf_set_name(buf, name)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  return buf
end

--- `view.buf` while it is valid, else a new unlisted scratch buffer named `name` (not
--- modifiable, hidden when left), `setup(buf)` (its keys), then kept in `view.buf`.
function M.scratch_buffer(view, name, filetype, setup)
  if view.buf and api.nvim_buf_is_valid(view.buf) then
    return view.buf
  end
  local buf = M.new_scratch(name)
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = filetype
  setup(buf)
  view.buf = buf
  return buf
end

--- A normal-mode key of `buf`.
function M.map(buf, lhs, fn, desc)
  vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, desc = "agentls: " .. desc })
end

--- Close the windows `wins` (`force`: even with changes), but never the last window.
function M.close_windows(wins, force)
  for _, win in ipairs(wins) do
    if #api.nvim_list_wins() > 1 then
      api.nvim_win_close(win, force)
    end
  end
end

--- `q` in `buf`: close its windows (but never the last window).
function M.map_close(buf, desc)
  M.map(buf, "q", function()
    M.close_windows(vim.fn.win_findbuf(buf), false)
  end, desc)
end

--- The windows of `buf` (in any tab); none when it is not a valid buffer.
function M.windows(buf)
  return buf and api.nvim_buf_is_valid(buf) and vim.fn.win_findbuf(buf) or {}
end

--- Whether `buf` is shown in a window.
function M.is_shown(buf)
  return #M.windows(buf) > 0
end

--- Go to a window of `buf`, else open one: a split below, a third of the screen high (8 lines at
--- least). Returns the window.
function M.show_below(buf)
  local win = vim.fn.win_findbuf(buf)[1]
  if win then
    api.nvim_set_current_win(win)
  else
    local height = math.max(8, math.floor(vim.o.lines / 3))
    win = api.nvim_open_win(buf, true, { split = "below", win = -1, height = height })
    vim.wo[win].wrap, vim.wo[win].number, vim.wo[win].relativenumber = false, false, false
    vim.wo[win].cursorline = true
  end
  return win
end

return M
