---@brief
---
--- https://github.com/derivls/derivls
---
--- `derivls`, a language server and checker for PyTorch's `tools/autograd/derivatives.yaml` (and
--- `native_functions.yaml`): the checks torchgen makes at build time, while you type; hover with the
--- generated `XyzBackward0` node, inlay hints, go to definition, references, completion, code actions.
--- Install it with `pip` (Python 3.10+) from a clone of its repository (it is not on the package index yet):
---
--- ```sh
--- python3 -m pip install /path/to/derivls
--- ```
---
--- The filetype stays `yaml` (YAML highlighting and other YAML servers keep working); `root_dir` only
--- accepts buffers named `derivatives.yaml` or `native_functions.yaml`, so other YAML files never start
--- it. It also attaches to `FunctionsManual.cpp` (filetype `cpp`, beside clangd; or the file the
--- `functionsManual` setting names): saving it re-checks, with `gradcheckOnSave`, the entries that call
--- a helper whose text changed, and a failure is shown on the helper's line too. Settings
--- (`nativeFunctions`, `tags`, `profile`, `torchVersion`, `functionsManual`, `compileOnSave`, ...) go under
--- `settings.derivls`:
---
--- ```lua
--- vim.lsp.config('derivls', {
---   settings = { derivls = { nativeFunctions = '~/pytorch/aten/src/ATen/native/native_functions.yaml' } },
--- })
--- ```
---
--- Gradcheck (the "Run gradcheck" lenses, `gradcheckOnSave`) compiles and runs an entry's C++: the server
--- offers it only in a trusted workspace. Neovim has no trust prompt of its own: for the checkouts you trust,
--- pass `trustedWorkspace = true` in `settings.derivls` (it goes to the server as initializationOptions);
--- without it, `gradcheckOnSave` and the lenses only say that they need a trusted workspace.
---
--- Found on 'runtimepath' as lsp/derivls.lua (Neovim 0.11+, `:help lsp-config`); enable it with
--- `vim.lsp.enable('derivls')` (this repository's plugin/derivls.lua does that unless
--- `vim.g.derivls_autostart = false`).

local handled = { ['derivatives.yaml'] = true, ['native_functions.yaml'] = true }
-- FunctionsManual.cpp (filetype cpp): the helpers the formulas call; the server watches it (gradcheckOnSave)
local manual = 'FunctionsManual.cpp'

-- The server's working directory: this file's folder, never the project. `python -m` puts its working
-- directory first on sys.path, so a project holding `derivls/`, `yaml/`, `pygls/`, `asyncio/`… would
-- otherwise have its code run by the server (Neovim's default cmd_cwd is Neovim's own cwd).
local neutral_cwd = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p')))
if neutral_cwd == nil or vim.uv.fs_stat(neutral_cwd) == nil then
  neutral_cwd = vim.uv.os_tmpdir()
end

--- The PyTorch checkout containing `fname` (the directory with aten/src/ATen/native/native_functions.yaml),
--- else the enclosing git repository, else the file's own directory (a lone file works too).
---@param fname string absolute path
---@return string
local function find_root(fname)
  for dir in vim.fs.parents(fname) do
    if vim.uv.fs_stat(dir .. '/aten/src/ATen/native/native_functions.yaml') then
      return dir
    end
  end
  return vim.fs.root(fname, { '.git' }) or vim.fs.dirname(fname)
end

--- Expands `~` and environment variables in the path settings, in place.
---@param settings table|nil the `derivls` settings table
local function expand_paths(settings)
  if type(settings) ~= 'table' then
    return
  end
  for _, key in ipairs({ 'nativeFunctions', 'tags', 'functionsManual' }) do
    if type(settings[key]) == 'string' and settings[key] ~= '' then
      settings[key] = vim.fs.normalize(settings[key])
    end
  end
end

--- Whether `path` is the file the `functionsManual` setting names (a FunctionsManual.cpp of another name).
---@param path string absolute, normalized
---@return boolean
local function is_manual_setting(path)
  local config = vim.lsp.config and vim.lsp.config.derivls
  local settings = config and config.settings and config.settings.derivls
  local named = type(settings) == 'table' and settings.functionsManual or nil
  return type(named) == 'string' and named ~= '' and vim.fs.normalize(named) == path
end

---@type vim.lsp.Config
return {
  -- `derivls` serves LSP over stdio (`derivls serve` is the same). For a Python that has derivls
  -- installed but no script on PATH: cmd = { 'python3', '-m', 'derivls' }.
  cmd = { 'derivls' },
  cmd_cwd = neutral_cwd,
  filetypes = { 'yaml', 'cpp' },
  root_dir = function(bufnr, on_dir)
    local fname = vim.api.nvim_buf_get_name(bufnr)
    if fname == '' then
      return
    end
    local path = vim.fs.normalize(vim.fn.fnamemodify(fname, ':p'))
    local base = vim.fs.basename(fname)
    if vim.bo[bufnr].filetype == 'cpp' then
      if base ~= manual and not is_manual_setting(path) then
        return -- not ours: leave every other C++ buffer to clangd
      end
    elseif not handled[base] then
      return -- not ours: leave every other YAML buffer alone
    end
    on_dir(find_root(path))
  end,
  settings = {
    derivls = {
      -- nativeFunctions = '/path/to/aten/src/ATen/native/native_functions.yaml',
      -- tags = '/path/to/aten/src/ATen/native/tags.yaml',
      profile = 'auto', -- 'auto' | 'torchgen' | 'legacy'
    },
  },
  before_init = function(params, config)
    local settings = config.settings and config.settings.derivls
    expand_paths(settings)
    -- The server also reads its settings from initializationOptions.
    if params.initializationOptions == nil and type(settings) == 'table' then
      params.initializationOptions = settings
    end
  end,
}
