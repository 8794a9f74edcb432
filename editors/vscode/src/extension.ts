/**
 * derivls for VS Code: starts the derivls language server for `derivatives.yaml` and
 * `native_functions.yaml` (language `yaml`, so YAML highlighting and other YAML extensions keep
 * working) and leaves every other YAML file alone.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  ConfigurationRequest,
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
} from 'vscode-languageclient/node';

import { GENERATED_SCHEME, GeneratedCodeProvider, isGeneratedCode } from './generatedCode';
import { chooseServer } from './probe';
import { onDidChangeInterpreter, selectedInterpreter } from './python';
import {
  LaunchContext,
  SERVER_SETTING_KEYS,
  ServerCandidate,
  entryLineAt,
  isDerivlsFile,
  noServerMessage,
  readServerSettings,
  serverCandidates,
  serverSettings,
  versionMismatchMessage,
} from './serverCommand';

const SECTION = 'derivls';
const SHOW_GENERATED_CODE = 'derivls.showGeneratedCode';
const GENERATED_CODE_CHANGED = 'derivls/generatedCodeChanged';
/** The server's command that compiles and runs an entry's C++ (gradcheck): a trusted workspace's only. */
const RUN_GRADCHECK = 'derivls.runGradcheck';
/** Told to the server when the user grants trust to the workspace: its gradcheck lenses become runnable. */
const WORKSPACE_TRUSTED = 'derivls/workspaceTrusted';
const FILE_PATTERN = '**/{derivatives,native_functions}.yaml';
/**
 * FunctionsManual.cpp: the helpers the formulas call. The server follows its saves (with gradcheckOnSave, the
 * entries calling a helper whose text changed are checked again) and shows a failure on the helper's line.
 */
const MANUAL_PATTERN = '**/FunctionsManual.cpp';
const DOCUMENT_SELECTOR = [
  { scheme: 'file', language: 'yaml', pattern: FILE_PATTERN },
  { scheme: 'file', language: 'cpp', pattern: MANUAL_PATTERN },
];

let output: vscode.OutputChannel;
let generated: GeneratedCodeProvider;
let client: LanguageClient | undefined;
let running: ServerCandidate | undefined;
let starting: Promise<void> | undefined;
/**
 * Set when the last start failed (and the user was told): opening more files does not try again and
 * stack up notifications; "derivls: Restart Server" or a change of `derivls.server.*` does.
 */
let startFailed = false;
/** The extension's own folder: the server's working directory (see LaunchContext.neutralCwd). */
let extensionDir: string | undefined;
/** package.json's version: the bundled server's too (one version source: derivls/__init__.py). */
let extensionVersion = '';

function isHandled(doc: vscode.TextDocument): boolean {
  return doc.uri.scheme === 'file' && doc.languageId === 'yaml' && isDerivlsFile(doc.uri.fsPath);
}

function workspaceFolderFor(resource?: vscode.Uri): vscode.WorkspaceFolder | undefined {
  return (resource && vscode.workspace.getWorkspaceFolder(resource)) ?? vscode.workspace.workspaceFolders?.[0];
}

function launchContext(resource?: vscode.Uri, pythonExtensionInterpreter?: string): LaunchContext {
  return {
    platform: process.platform,
    home: os.homedir(),
    workspaceFolder: workspaceFolderFor(resource)?.uri.fsPath,
    env: process.env,
    pythonExtensionInterpreter,
    neutralCwd: extensionDir ?? os.tmpdir(),
    bundledLauncher: bundledLauncher(),
  };
}

/** bundled/derivls_server.py when the extension carries its server (`npm run bundle` puts it there). */
function bundledLauncher(): string | undefined {
  if (extensionDir === undefined) {
    return undefined;
  }
  const launcher = path.join(extensionDir, 'bundled', 'derivls_server.py');
  return fs.existsSync(launcher) && fs.existsSync(path.join(extensionDir, 'bundled', 'libs', 'derivls')) ? launcher : undefined;
}

function currentServerSettings(scope?: vscode.Uri) {
  const cfg = vscode.workspace.getConfiguration(SECTION, scope ?? null);
  return serverSettings(readServerSettings((key, fallback) => cfg.get(key, fallback)), launchContext(scope));
}

/** Answers the server's workspace/configuration requests for `derivls` with expanded paths. */
const configurationMiddleware: ConfigurationRequest.MiddlewareSignature = async (params, token, next) => {
  const defaults = await next(params, token);
  if (!Array.isArray(defaults)) {
    return defaults;
  }
  return params.items.map((item, i) => {
    const section = item.section ?? '';
    if (section !== SECTION && !section.startsWith(`${SECTION}.`)) {
      return defaults[i];
    }
    const scope = item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined;
    const settings: Record<string, unknown> = { ...currentServerSettings(scope) };
    return section === SECTION ? settings : (settings[section.slice(SECTION.length + 1)] ?? null);
  });
};

/**
 * Logs the error and shows it as a notification without waiting for the user: activate() and the
 * commands must not hang while the notification is open.
 */
function showServerError(message: string): void {
  output.appendLine(message);
  void vscode.window.showErrorMessage(message, 'Open Settings', 'Show Output').then(async (choice) => {
    if (choice === 'Open Settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'derivls.server');
    } else if (choice === 'Show Output') {
      output.show(true);
    }
  });
}

async function startClient(): Promise<void> {
  const resource = vscode.window.activeTextEditor?.document.uri;
  const cfg = vscode.workspace.getConfiguration(SECTION, resource ?? null);
  const launch = {
    path: cfg.get<string>('server.path', ''),
    python: cfg.get<string>('server.python', ''),
    importStrategy: cfg.get<string>('importStrategy', 'useBundled'),
  };
  const usesDefault = launch.path.trim() === '' && launch.python.trim() === '';
  const ctx = launchContext(resource, usesDefault ? await selectedInterpreter(resource) : undefined);
  const { chosen, failures } = await chooseServer(serverCandidates(launch, ctx), ctx);
  for (const f of failures) {
    output.appendLine(`[derivls] ${f.candidate.origin}: ${f.candidate.display}: ${f.reason}`);
  }
  if (chosen === undefined) {
    startFailed = true;
    showServerError(noServerMessage(failures));
    return;
  }
  output.appendLine(`[derivls] starting ${chosen.display} (${chosen.origin}) in ${ctx.neutralCwd ?? '.'}`);

  // Never the workspace folder as working directory: see LaunchContext.neutralCwd.
  const serverOptions: ServerOptions = {
    command: chosen.command,
    args: chosen.args,
    options: { cwd: ctx.neutralCwd, env: { ...process.env } },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: DOCUMENT_SELECTOR,
    // FunctionsManual.cpp changed on disk (a checkout switched, another editor): the server re-reads its helpers
    synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher(MANUAL_PATTERN) },
    outputChannel: output,
    // trustedWorkspace: the server takes compileCxx, compileTorchInclude and gradcheckPython from a
    // workspace's configuration only when it is trusted (docs/security.md)
    initializationOptions: () => ({ ...currentServerSettings(), trustedWorkspace: vscode.workspace.isTrusted }),
    middleware: {
      executeCommand: async (command, args, next) => {
        if (command === RUN_GRADCHECK && !vscode.workspace.isTrusted) {
          // restricted mode: the entry's C++ is never compiled and run, whatever the server would answer
          void vscode.window.showWarningMessage(
            "derivls: gradcheck compiles and runs the entry's C++; trust this workspace to run it.",
          );
          return { started: false, reason: 'restricted mode' };
        }
        const result: unknown = await next(command, args);
        if (command === SHOW_GENERATED_CODE && isGeneratedCode(result)) {
          await generated.show(result);
        }
        return result;
      },
      workspace: { configuration: configurationMiddleware },
    },
  };
  const newClient = new LanguageClient('derivls', 'derivls', serverOptions, clientOptions);
  // The server pushes new content for generated-code views that are open when their entry changes.
  newClient.onNotification(GENERATED_CODE_CHANGED, (params: unknown) => {
    if (isGeneratedCode(params)) {
      generated.update(params);
    }
  });
  try {
    await newClient.start();
  } catch (err) {
    startFailed = true;
    showServerError(
      `derivls: the language server (${chosen.display}) failed to start: ${String(err)}. ` +
        'See "derivls: Show Output"; set "derivls.server.path" or "derivls.server.python" to another installation if needed.',
    );
    try {
      await newClient.dispose();
    } catch {
      // Already stopped.
    }
    return;
  }
  client = newClient;
  running = chosen;
  checkServerVersion(newClient, chosen);
}

/** The extension and its server check each other's version: a mismatch is a dismissible warning. */
function checkServerVersion(started: LanguageClient, chosen: ServerCandidate): void {
  const serverInfo = started.initializeResult?.serverInfo;
  output.appendLine(`[derivls] server ${serverInfo?.name ?? '?'} ${serverInfo?.version ?? '?'}; extension ${extensionVersion}`);
  const message = versionMismatchMessage(extensionVersion, serverInfo, chosen);
  if (message === undefined) {
    return;
  }
  output.appendLine(message);
  const useBundled = 'Use Bundled Server';
  const choices = chosen.bundled || bundledLauncher() === undefined ? [] : [useBundled];
  void vscode.window.showWarningMessage(message, ...choices).then(async (choice) => {
    if (choice === useBundled) {
      await vscode.workspace
        .getConfiguration(SECTION)
        .update('importStrategy', 'useBundled', vscode.ConfigurationTarget.Global);
    }
  });
}

/** Starts the server once; concurrent callers share the same start. */
function ensureStarted(): Promise<void> {
  if (client !== undefined || startFailed) {
    return Promise.resolve();
  }
  starting ??= startClient().finally(() => {
    starting = undefined;
  });
  return starting;
}

async function stopClient(): Promise<void> {
  await starting;
  const old = client;
  client = undefined;
  running = undefined;
  if (old !== undefined) {
    try {
      await old.stop();
    } catch (err) {
      output.appendLine(`[derivls] stopping the server: ${String(err)}`);
    }
  }
}

async function restart(): Promise<void> {
  await stopClient();
  startFailed = false;
  await ensureStarted();
}

async function showGeneratedCodeAtCursor(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (editor === undefined || !isHandled(editor.document)) {
    await vscode.window.showInformationMessage('derivls: open derivatives.yaml and place the cursor inside an entry.');
    return;
  }
  const doc = editor.document;
  const lines = doc.getText().split(/\r?\n/);
  const entryLine = entryLineAt(lines, editor.selection.active.line);
  if (entryLine === undefined) {
    await vscode.window.showInformationMessage('derivls: place the cursor inside a `- name:` entry of derivatives.yaml.');
    return;
  }
  await ensureStarted();
  if (client === undefined) {
    return;
  }
  const result: unknown = await client.sendRequest(ExecuteCommandRequest.type, {
    command: SHOW_GENERATED_CODE,
    arguments: [client.code2ProtocolConverter.asUri(doc.uri), entryLine],
  });
  if (isGeneratedCode(result)) {
    await generated.show(result);
  } else {
    await vscode.window.showWarningMessage('derivls: the server returned no generated code for this entry.');
  }
}

async function startIfWanted(): Promise<void> {
  if (vscode.workspace.textDocuments.some(isHandled)) {
    await ensureStarted();
    return;
  }
  // Activated by workspaceContains (or by another YAML file): start only if the workspace has our files.
  const found = await vscode.workspace.findFiles(FILE_PATTERN, '**/node_modules/**', 1);
  if (found.length > 0) {
    await ensureStarted();
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  extensionDir = context.extensionUri.fsPath;
  extensionVersion = String((context.extension.packageJSON as { version?: string }).version ?? '');
  output = vscode.window.createOutputChannel('derivls');
  generated = new GeneratedCodeProvider();
  context.subscriptions.push(
    output,
    generated,
    vscode.workspace.registerTextDocumentContentProvider(GENERATED_SCHEME, generated),
    vscode.commands.registerCommand('derivls.restartServer', restart),
    vscode.commands.registerCommand('derivls.showOutput', () => output.show(true)),
    vscode.commands.registerCommand('derivls.showGeneratedCodeAtCursor', showGeneratedCodeAtCursor),
    vscode.workspace.onDidOpenTextDocument((doc) => {
      if (isHandled(doc)) {
        void ensureStarted();
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(async () => {
      // initializationOptions said trustedWorkspace: false; the server reads the workspace's settings again
      await client?.sendNotification(WORKSPACE_TRUSTED, {});
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      const serverSettingsChanged =
        e.affectsConfiguration(`${SECTION}.server`) || e.affectsConfiguration(`${SECTION}.importStrategy`);
      if (client === undefined) {
        if (startFailed && serverSettingsChanged) {
          startFailed = false; // new settings: try them
          await startIfWanted();
        }
        return;
      }
      if (serverSettingsChanged) {
        const choice = await vscode.window.showInformationMessage(
          'derivls: the server settings changed. Restart the server?',
          'Restart',
        );
        if (choice === 'Restart') {
          await restart();
        }
      } else if (SERVER_SETTING_KEYS.some((k) => e.affectsConfiguration(`${SECTION}.${k}`))) {
        await client.sendNotification(DidChangeConfigurationNotification.type, {
          settings: { [SECTION]: currentServerSettings() },
        });
      }
    }),
  );
  const interpreterWatch = await onDidChangeInterpreter(() => {
    if (running?.origin === 'Python extension interpreter') {
      void restart();
    }
  });
  if (interpreterWatch !== undefined) {
    context.subscriptions.push(interpreterWatch);
  }
  // Not awaited: activation (and with it every command of the extension) must not wait for the
  // server's probes and start, nor for an error notification.
  void startIfWanted();
}

export async function deactivate(): Promise<void> {
  await stopClient();
}
