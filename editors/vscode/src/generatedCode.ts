/** Read-only virtual documents for the C++ that torchgen would generate for an entry. */
import * as vscode from 'vscode';

export const GENERATED_SCHEME = 'derivls-generated';

/** What the server's `derivls.showGeneratedCode` command returns. */
export interface GeneratedCode {
  uri: string;
  content: string;
}

export function isGeneratedCode(value: unknown): value is GeneratedCode {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as GeneratedCode).uri === 'string' &&
    typeof (value as GeneratedCode).content === 'string'
  );
}

/** Holds the latest content per URI; documents of this scheme are read-only in VS Code. */
export class GeneratedCodeProvider implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly contents = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.toString()) ?? '// derivls: this generated code is no longer available; run "derivls: Show Generated Code" again.\n';
  }

  private static toUri(raw: string): vscode.Uri {
    const uri = vscode.Uri.parse(raw);
    return uri.scheme === GENERATED_SCHEME ? uri : vscode.Uri.from({ scheme: GENERATED_SCHEME, path: uri.path, query: uri.query });
  }

  /**
   * New content for a view that is shown (the server's `derivls/generatedCodeChanged`
   * notification after the entry was edited): open editors of that URI follow.
   */
  update(result: GeneratedCode): void {
    const uri = GeneratedCodeProvider.toUri(result.uri);
    const key = uri.toString();
    if (this.contents.has(key) && this.contents.get(key) !== result.content) {
      this.contents.set(key, result.content);
      this.changed.fire(uri);
    }
  }

  /** Stores the content and opens it beside the current editor. */
  async show(result: GeneratedCode): Promise<void> {
    const uri = GeneratedCodeProvider.toUri(result.uri);
    this.contents.set(uri.toString(), result.content);
    this.changed.fire(uri);
    let doc = await vscode.workspace.openTextDocument(uri);
    if (doc.languageId !== 'cpp') {
      try {
        doc = await vscode.languages.setTextDocumentLanguage(doc, 'cpp');
      } catch {
        // No C++ language registered: plain text is fine.
      }
    }
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true, preserveFocus: false });
  }

  dispose(): void {
    this.changed.dispose();
    this.contents.clear();
  }
}
