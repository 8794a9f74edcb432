-- derivls client-side helpers: the generated-code view and the `derivls.showGeneratedCode`
-- command handler (used by code lenses and :DerivlsShowGeneratedCode).
local M = {}

M.command = 'derivls.showGeneratedCode'

local function notify(msg, level)
  vim.notify('derivls: ' .. msg, level or vim.log.levels.WARN)
end

--- The 0-based line of the `- name:` that starts the entry containing 0-based `line`, or nil.
---@param lines string[]
---@param line integer
---@return integer|nil
function M.entry_line(lines, line)
  for i = line + 1, 1, -1 do
    local text = lines[i]
    if text == nil then
      return nil
    end
    if text:match('^%-%s+name%s*:') then
      return i - 1
    end
    if i ~= line + 1 and text:match('^%-%s') then
      return nil
    end
  end
  return nil
end

M.changed_notification = 'derivls/generatedCodeChanged'

local function find_buf(uri)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_valid(buf) and vim.b[buf].derivls_generated_uri == uri then
      return buf
    end
  end
  return nil
end

--- The buffer name for a generated-code URI: the URI without its `?source=…` query
--- (`derivls-generated:/acos.cpp`), or the whole URI when that name is taken.
local function buffer_name(uri)
  local short = uri:gsub('%?.*$', '')
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(buf) == short then
      return uri
    end
  end
  return short
end

local function set_content(buf, content)
  vim.bo[buf].modifiable = true
  vim.bo[buf].readonly = false
  local lines = vim.split(content, '\r?\n')
  if #lines > 1 and lines[#lines] == '' then
    table.remove(lines) -- the final newline
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modified = false
  vim.bo[buf].modifiable = false
  vim.bo[buf].readonly = true
end

--- Shows a `{ uri, content }` result of derivls.showGeneratedCode in a read-only C++ scratch buffer
--- named after the uri (`derivls-generated:/<Op>.cpp`), reusing the buffer of a previous call.
---@param result {uri: string, content: string}
---@return integer|nil bufnr
function M.show(result)
  if type(result) ~= 'table' or type(result.content) ~= 'string' then
    notify('the server returned no generated code for this entry')
    return nil
  end
  local uri = type(result.uri) == 'string' and result.uri or 'derivls-generated:/generated.cpp'
  local buf = find_buf(uri)
  if buf == nil then
    buf = vim.api.nvim_create_buf(false, true) -- unlisted scratch: buftype=nofile, noswapfile
    vim.api.nvim_buf_set_name(buf, buffer_name(uri))
    vim.b[buf].derivls_generated_uri = uri
    vim.bo[buf].bufhidden = 'wipe'
  end
  set_content(buf, result.content)
  if vim.bo[buf].filetype ~= 'cpp' then
    vim.bo[buf].filetype = 'cpp'
  end
  local win = vim.fn.bufwinid(buf)
  if win ~= -1 then
    vim.api.nvim_set_current_win(win)
  else
    vim.cmd(vim.g.derivls_generated_split or 'vsplit')
    vim.api.nvim_win_set_buf(0, buf)
  end
  return buf
end

--- Handler for the server's `derivls/generatedCodeChanged` notification ({ uri, content }): a shown
--- generated-code buffer follows edits of its entry.
function M.on_generated_changed(_err, params)
  if type(params) ~= 'table' or type(params.uri) ~= 'string' or type(params.content) ~= 'string' then
    return
  end
  local buf = find_buf(params.uri)
  if buf ~= nil then
    set_content(buf, params.content)
  end
end

--- Sends derivls.showGeneratedCode to the server and shows the result.
---@param client vim.lsp.Client
---@param arguments any[] { uri, entryLine }
---@param bufnr integer
function M.request(client, arguments, bufnr)
  client:request('workspace/executeCommand', { command = M.command, arguments = arguments }, function(err, result)
    if err then
      notify('showGeneratedCode failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    M.show(result)
  end, bufnr)
end

--- Client-side handler for the `derivls.showGeneratedCode` command carried by code lenses
--- (registered in vim.lsp.commands by plugin/derivls.lua): runs it on the server and opens the result.
---@param command lsp.Command
---@param ctx {bufnr: integer, client_id: integer}
function M.command_handler(command, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if client == nil then
    notify('the derivls client is gone')
    return
  end
  M.request(client, command.arguments or {}, ctx.bufnr)
end

--- :DerivlsShowGeneratedCode — the generated C++ for the derivatives.yaml entry under the cursor.
function M.show_at_cursor()
  local bufnr = vim.api.nvim_get_current_buf()
  local client = vim.lsp.get_clients({ bufnr = bufnr, name = 'derivls' })[1]
  if client == nil then
    notify('derivls is not running for this buffer (open derivatives.yaml)')
    return
  end
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, row + 1, false)
  local entry = M.entry_line(lines, row)
  if entry == nil then
    notify('place the cursor inside a `- name:` entry of derivatives.yaml')
    return
  end
  M.request(client, { vim.uri_from_bufnr(bufnr), entry }, bufnr)
end

return M
