--- Hunks as the server sends them (`agent/getChanges`, `agent/reviewEdit`): `{oldStart,
--- oldLines, newStart, newLines, lines}`, the unified diff's numbers (1-based; for an empty
--- side, the line before) and its lines with their prefix (" ", "-", "+"), "\ No newline at
--- end of file" after a last line without one.
local M = {}

M.NO_NEWLINE = "\\ No newline at end of file"

--- "@@ -a,b +c,d @@", the length left out when it is 1 (as unified diffs write it).
function M.header(hunk)
  local function range(start, count)
    return count == 1 and tostring(start) or ("%d,%d"):format(start, count)
  end
  return ("@@ -%s +%s @@"):format(range(hunk.oldStart, hunk.oldLines), range(hunk.newStart, hunk.newLines))
end

--- The changed part of `hunk` (its lines from the first change to the last, the context around
--- them left out): `{old_row, new_row, old, new}`, where it starts in each text (0-based) and
--- its lines on each side.
---@return {old_row: integer, new_row: integer, old: string[], new: string[]}
function M.region(hunk)
  local lines = vim.tbl_filter(function(line)
    return line ~= M.NO_NEWLINE
  end, type(hunk.lines) == "table" and hunk.lines or {})
  local first, last
  for i, line in ipairs(lines) do
    if line:sub(1, 1) ~= " " then
      first, last = first or i, i
    end
  end
  local region = {
    old_row = hunk.oldLines > 0 and hunk.oldStart - 1 or hunk.oldStart,
    new_row = hunk.newLines > 0 and hunk.newStart - 1 or hunk.newStart,
    old = {},
    new = {},
  }
  if not first then
    return region
  end
  region.old_row, region.new_row = region.old_row + first - 1, region.new_row + first - 1
  for i = first, last do
    local prefix, text = lines[i]:sub(1, 1), lines[i]:sub(2)
    if prefix ~= "+" then
      region.old[#region.old + 1] = text
    end
    if prefix ~= "-" then
      region.new[#region.new + 1] = text
    end
  end
  return region
end

--- `lines` with `count` lines from `row` (0-based) replaced by `with` (a new list).
function M.replaced(lines, row, count, with)
  local out = vim.list_slice(lines, 1, row)
  vim.list_extend(out, with)
  return vim.list_extend(out, vim.list_slice(lines, row + count + 1))
end

return M
