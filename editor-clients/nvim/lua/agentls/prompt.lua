--- The prompt buffer: where :AgentPrompt, :AgentSteer and :AgentFollowUp without text (and the
--- panel's `i`, `s`, `f`) ask for the message. Multi-line and paste-friendly: it is an ordinary
--- buffer (filetype markdown); `<CR>` or `<C-s>` sends (while the agent runs: steers, as
--- `prompt_when_busy` says), `<M-CR>` sends as a follow-up, `<S-CR>` (or `<C-j>`, where the
--- terminal cannot tell Shift+Enter) in insert mode is a new line, `q` closes it keeping the
--- draft, `<C-p>`/`<C-n>` (and `<Up>`/`<Down>` on the first/last line in normal mode) go through
--- the history of sent messages. `<Tab>` (or `<C-x><C-o>`) completes `/` commands and `@path`.
local config = require("agentls.config")
local util = require("agentls.util")

local api = vim.api
local M = {}

---@type integer?
M.buf = nil
--- What sending does: {what = "prompt"|"steer"|"follow up", send = fun(text)}.
M.target = nil
--- Sent messages, oldest first.
---@type string[]?
M.history = nil
local browsing = nil -- {index, draft} while <C-p>/<C-n> show the history

local function history_file()
  return vim.fs.joinpath(vim.fn.stdpath("state"), "agentls", "prompt_history.json")
end

local function load_history()
  if M.history then
    return M.history
  end
  M.history = {}
  local ok, lines = pcall(vim.fn.readfile, history_file())
  if ok and lines[1] then
    local decoded_ok, decoded = pcall(vim.json.decode, table.concat(lines, "\n"))
    if decoded_ok and type(decoded) == "table" then
      M.history = vim.tbl_filter(function(item)
        return type(item) == "string"
      end, decoded)
    end
  end
  return M.history
end

local function save_history()
  local path = history_file()
  pcall(vim.fn.mkdir, vim.fs.dirname(path), "p")
  pcall(vim.fn.writefile, { vim.json.encode(M.history) }, path)
end

--- Add `text` to the history (not twice in a row; at most `prompt.history_size` entries).
function M.remember(text)
  local history = load_history()
  if history[#history] ~= text then
    history[#history + 1] = text
  end
  local size = (config.options.prompt or {}).history_size or 100
  while #history > size do
    table.remove(history, 1)
  end
  save_history()
end

local function valid_buf()
  return M.buf and api.nvim_buf_is_valid(M.buf)
end

--- The prompt's windows (in any tab).
function M.windows()
  return util.windows(M.buf)
end

local function text()
  return table.concat(api.nvim_buf_get_lines(M.buf, 0, -1, false), "\n")
end

local function set_text(value)
  local lines = vim.split(value or "", "\n", { plain = true })
  api.nvim_buf_set_lines(M.buf, 0, -1, false, lines)
  local win = M.windows()[1]
  if win then
    api.nvim_win_set_cursor(win, { #lines, #lines[#lines] })
  end
end

--- Close the prompt window; the draft stays for the next time.
function M.close()
  util.close_windows(M.windows(), true)
  vim.cmd.stopinsert()
end

--- Send the buffer's text: it goes to the history, the buffer empties and closes. `when_busy`
--- ("followUp" for <M-CR>) says what it becomes while the agent runs (else `prompt_when_busy`).
---@param when_busy "followUp"|nil
function M.send(when_busy)
  if not (valid_buf() and M.target) then
    return
  end
  local value = vim.trim(text())
  if value == "" then
    return util.notify("nothing to send: the text is empty", vim.log.levels.WARN)
  end
  local target = M.target
  M.remember(value)
  browsing = nil
  set_text("")
  M.close()
  target.send(value, when_busy)
end

--- Show the history entry `step` away from the shown one (-1 older, +1 newer).
function M.browse(step)
  local history = load_history()
  if #history == 0 then
    return
  end
  if not browsing then
    browsing = { index = #history + 1, draft = text() }
  end
  local index = math.max(1, math.min(#history + 1, browsing.index + step))
  if index == browsing.index then
    return
  end
  browsing.index = index
  set_text(index > #history and browsing.draft or history[index])
end

--- The winbar, fitted to `width` columns: what sending does, the attachments that go with it,
--- the keys (the least used shortened or dropped first in a narrow window).
local function winbar(what, width)
  local labels = require("agentls.context").labels()
  local title = { text = " agentls " .. what, short = " " .. what, group = "AgentlsWinbar", required = true }
  title.keep, title.short_keep = 85, 65
  local parts = { title }
  if #labels > 0 then
    local all = ("📎 %s"):format(table.concat(labels, ", "))
    parts[#parts + 1] = { text = all, keep = 70, short = ("📎 %d"):format(#labels) }
  end
  local keys = {
    { text = "<CR> sends (busy: steers)", keep = 100, short = "<CR> sends", short_keep = 70, required = true },
    { text = "<M-CR> follow-up", keep = 80 },
    { text = "<S-CR> new line", keep = 60 },
    { text = "<C-p>/<C-n> history", keep = 30 },
    { text = "q closes", keep = 50 },
    { text = "<Tab> completes / and @", keep = 20, short = "<Tab> completes" },
  }
  vim.list_extend(parts, keys)
  return require("agentls.winbar").fit(parts, width)
end

--- The prompt window's winbar again (its width changed: WinResized).
function M.refresh_winbar()
  for _, win in ipairs(M.windows()) do
    vim.wo[win].winbar = winbar(M.target and M.target.what or "prompt", vim.api.nvim_win_get_width(win))
  end
end

--- Completion of the prompt (`omnifunc`): `/` commands at the start of the message, `@path`
--- mentions anywhere.
function M.omnifunc(findstart, base)
  local complete = require("agentls.complete")
  local row, col = unpack(api.nvim_win_get_cursor(0))
  local before = api.nvim_get_current_line():sub(1, col)
  local start, kind = complete.word_start(before, row == 1)
  if findstart == 1 then
    return start or -3 -- -3: no completion, leave the menu closed
  end
  if kind == "mention" then
    return complete.mention_words(base)
  elseif kind == "command" then
    return complete.command_words(base)
  end
  return {}
end

local function tab()
  if vim.fn.pumvisible() == 1 then
    return "<C-n>"
  end
  local col = api.nvim_win_get_cursor(0)[2]
  local before = api.nvim_get_current_line():sub(1, col)
  if require("agentls.complete").word_start(before, api.nvim_win_get_cursor(0)[1] == 1) then
    return "<C-x><C-o>"
  end
  return "<Tab>"
end

local function ensure_buf()
  if valid_buf() then
    return M.buf
  end
  local buf = util.new_scratch("agentls://prompt")
  vim.bo[buf].filetype = "markdown"
  vim.bo[buf].omnifunc = "v:lua.require'agentls.prompt'.omnifunc"
  local function map(modes, lhs, rhs, desc, opts)
    vim.keymap.set(modes, lhs, rhs, vim.tbl_extend("force", { buffer = buf, desc = "agentls: " .. desc }, opts or {}))
  end
  local function send()
    M.send()
  end
  local function follow_up()
    M.send("followUp")
  end
  map("n", "<CR>", send, "send the message (while the agent runs: steer)")
  map("i", "<CR>", function()
    if vim.fn.pumvisible() == 1 then
      return "<C-y>" -- accept the completion
    end
    vim.schedule(send)
    return ""
  end, "send the message (while the agent runs: steer)", { expr = true })
  map({ "n", "i" }, "<C-s>", send, "send the message (while the agent runs: steer)")
  map({ "n", "i" }, "<M-CR>", follow_up, "send the message (while the agent runs: as a follow-up)")
  map("i", "<S-CR>", "<CR>", "a new line")
  map("n", "q", M.close, "close the prompt (the draft stays)")
  map({ "n", "i" }, "<C-p>", function()
    M.browse(-1)
  end, "the previous message of the history")
  map({ "n", "i" }, "<C-n>", function()
    M.browse(1)
  end, "the next message of the history")
  map("n", "<Up>", function()
    if api.nvim_win_get_cursor(0)[1] == 1 then
      M.browse(-1)
    else
      vim.cmd("normal! k")
    end
  end, "up, or the previous message on the first line")
  map("n", "<Down>", function()
    if api.nvim_win_get_cursor(0)[1] == api.nvim_buf_line_count(0) then
      M.browse(1)
    else
      vim.cmd("normal! j")
    end
  end, "down, or the next message on the last line")
  map("i", "<Tab>", tab, "complete / commands and @paths", { expr = true })
  M.buf = buf
  return buf
end

--- Open the prompt for `what` ("prompt", "steer", "follow up", "edit the queued message");
--- sending calls `send(text)`. `initial` replaces the draft (a rewound message, a queued item).
---@param what string
---@param send fun(text: string)
---@param initial string?
function M.open(what, send, initial)
  local buf = ensure_buf()
  M.target = { what = what, send = send }
  local win = M.windows()[1]
  if not win then
    local height = (config.options.prompt or {}).height or 8
    local panel_win = require("agentls.panel").windows()[1]
    local below_panel = panel_win and api.nvim_win_get_tabpage(panel_win) == api.nvim_get_current_tabpage()
      and api.nvim_win_get_config(panel_win).relative == ""
    win = api.nvim_open_win(buf, true, {
      split = "below",
      win = below_panel and panel_win or -1,
      height = height,
    })
    local wo = vim.wo[win]
    wo.wrap, wo.linebreak = true, true
    wo.number, wo.relativenumber, wo.signcolumn, wo.winfixheight = false, false, "no", true
  else
    api.nvim_set_current_win(win)
  end
  M.refresh_winbar()
  if initial then
    browsing = nil
    set_text(initial)
  end
  local last = api.nvim_buf_line_count(buf)
  api.nvim_win_set_cursor(win, { last, #(api.nvim_buf_get_lines(buf, last - 1, last, false)[1] or "") })
  vim.cmd.startinsert({ bang = true })
  return win
end

return M
