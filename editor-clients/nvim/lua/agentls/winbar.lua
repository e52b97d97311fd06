--- Winbars that fit their window. Neovim cuts a winbar that is too long from the left, so the
--- panel's model, the prompt's keys and the review's file name were the first to go. Here a
--- winbar is a list of parts joined with " · ": while it is too wide, the least useful part
--- is shortened (when it has a shorter text) or dropped; what still does not fit is cut from
--- the right, with "…".
local M = {}

---@class agentls.WinbarPart
---@field text string what the part shows (plain text: escaped here)
---@field group string? its highlight group
---@field keep number how useful it is: the lowest is shortened, then dropped, first
---@field short string? a shorter text, used before the part is dropped
---@field short_keep number? when to shorten it, in the order of `keep` (default: its `keep`)
---@field required boolean? never dropped (but shortened, and cut when nothing else is left)

local SEPARATOR = " · "
local SEPARATOR_WIDTH = vim.fn.strdisplaywidth(SEPARATOR)

local function escape(text)
  return (text:gsub("%%", "%%%%"))
end

local function width_of(parts)
  local total = 0
  for i, part in ipairs(parts) do
    total = total + vim.fn.strdisplaywidth(part.text) + (i > 1 and SEPARATOR_WIDTH or 0)
  end
  return total
end

--- What to give up next: the least useful part that can still be shortened or dropped.
local function least_useful(parts)
  local index, lowest
  for i, part in ipairs(parts) do
    local keep = part.short and (part.short_keep or part.keep) or (not part.required and part.keep) or nil
    if keep and (not lowest or keep < lowest) then
      index, lowest = i, keep
    end
  end
  return index
end

--- `text` cut to `columns` display columns, its end replaced by "…" when it was cut.
local function cut(text, columns)
  if vim.fn.strdisplaywidth(text) <= columns then
    return text
  end
  local chars = vim.fn.strchars(text)
  while chars > 0 and vim.fn.strdisplaywidth(vim.fn.strcharpart(text, 0, chars)) > columns - 1 do
    chars = chars - 1
  end
  return vim.fn.strcharpart(text, 0, chars) .. "…"
end

--- The parts that fit `width` columns, as a winbar string ('statusline' syntax).
---@param parts agentls.WinbarPart[]
---@param width integer
---@return string
function M.fit(parts, width)
  local shown = {}
  for _, part in ipairs(parts) do
    shown[#shown + 1] = vim.deepcopy(part)
  end
  while width_of(shown) > width do
    local index = least_useful(shown)
    if not index then
      break
    end
    local part = shown[index]
    if part.short then
      part.text, part.short = part.short, nil
    else
      table.remove(shown, index)
    end
  end
  local out, used = {}, 0
  for i, part in ipairs(shown) do
    local separator = i > 1 and SEPARATOR or ""
    local room = width - used - (i > 1 and SEPARATOR_WIDTH or 0)
    if room <= 0 then
      break
    end
    local text = cut(part.text, room)
    used = used + vim.fn.strdisplaywidth(separator .. text)
    local body = escape(text)
    out[#out + 1] = separator .. (part.group and ("%#" .. part.group .. "#" .. body .. "%*") or body)
    if text ~= part.text then
      break
    end
  end
  return table.concat(out)
end

--- The width a winbar of window `win` may use.
function M.width(win)
  return vim.api.nvim_win_is_valid(win) and vim.api.nvim_win_get_width(win) or vim.o.columns
end

return M
