// A yes/no question before an action that moves a note.

import { Modal, Setting, type App } from "obsidian";

export interface Confirmation {
  title: string;
  text: string;
  confirm: string;
}

export class ConfirmModal extends Modal {
  private answered = false;

  constructor(app: App, private readonly question: Confirmation, private readonly answer: (yes: boolean) => void) {
    super(app);
  }

  override onOpen(): void {
    this.titleEl.setText(this.question.title);
    this.contentEl.createEl("p", { text: this.question.text });
    new Setting(this.contentEl)
      .addButton((button) => button.setButtonText("Cancel").onClick(() => this.reply(false)))
      .addButton((button) => button.setButtonText(this.question.confirm).setCta().onClick(() => this.reply(true)));
  }

  override onClose(): void {
    this.contentEl.empty();
    if (!this.answered) {
      this.answered = true;
      this.answer(false);
    }
  }

  private reply(yes: boolean): void {
    if (!this.answered) {
      this.answered = true;
      this.answer(yes);
    }
    this.close();
  }
}

/** Asks, and resolves true only when the user confirms (closing the dialog is a no). */
export function confirm(app: App, question: Confirmation): Promise<boolean> {
  return new Promise((resolve) => new ConfirmModal(app, question, resolve).open());
}
