// One dialog for every detail a tap needs (scorer, assist, minute, dismissal…), built per tap.
//
// A field is {name, label, type, ...}: `players` (a grid of big name buttons; `optional` adds
// "not known"), `choice` (segmented buttons), `number`, `text`. The dialog is a native <dialog>:
// it traps focus, Esc cancels, Enter saves, and every control has a visible label.
// `openForm` resolves with the values, or null when cancelled.

import { h, byId, replace } from "../shared/dom.js";

export function openForm({ title, fields, submit = "Save" }) {
  const dialog = byId("form-dialog");
  const values = {};
  const problems = h("p", { class: "form-problem", role: "alert" });
  const body = fields.map((field) => renderField(field, values));
  const save = h("button", { type: "submit", class: "primary", "data-action": "save" }, submit);
  const cancel = h("button", { type: "button", "data-action": "cancel", onclick: () => dialog.close("cancel") }, "Cancel");
  const form = h("form", { method: "dialog", class: "tap-form" }, h("h2", { id: "form-title" }, title), body, problems, h("div", { class: "form-actions" }, cancel, save));
  replace(dialog, form);
  dialog.setAttribute("aria-labelledby", "form-title");
  return new Promise((resolve) => {
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const missing = fields.find((field) => field.required && (values[field.name] === undefined || values[field.name] === ""));
      if (missing) {
        problems.textContent = `Choose ${missing.label.toLowerCase()}`;
        return;
      }
      dialog.close("save");
    });
    dialog.addEventListener(
      "close",
      () => resolve(dialog.returnValue === "save" ? { ...values } : null),
      { once: true },
    );
    dialog.returnValue = "";
    dialog.showModal();
    const first = dialog.querySelector("[data-autofocus]") || save;
    first.focus();
  });
}

function renderField(field, values) {
  if (field.value !== undefined) values[field.name] = field.value;
  switch (field.type) {
    case "players":
      return choiceGroup(field, values, [
        ...(field.optional ? [{ value: null, label: field.optionalLabel || "Not known" }] : []),
        ...field.players.map((player) => ({
          value: player.id,
          label: player.shirt_number !== undefined ? `${player.shirt_number} ${player.name}` : player.name,
        })),
      ], "players");
    case "choice":
      return choiceGroup(field, values, field.options, "segmented");
    case "number": {
      const id = `field-${field.name}`;
      const input = h("input", {
        id, type: "number", inputmode: "numeric", min: field.min, max: field.max, value: field.value ?? "",
        oninput: (event) => {
          values[field.name] = event.target.value === "" ? undefined : Number(event.target.value);
        },
      });
      return h("div", { class: "field" }, h("label", { for: id }, field.label), input);
    }
    case "text": {
      const id = `field-${field.name}`;
      const input = h("input", {
        id, type: "text", maxlength: field.maxLength || 1000, value: field.value ?? "", "data-autofocus": true,
        oninput: (event) => {
          values[field.name] = event.target.value;
        },
      });
      return h("div", { class: "field" }, h("label", { for: id }, field.label), input);
    }
    default:
      throw new Error(`unknown field type ${field.type}`);
  }
}

function choiceGroup(field, values, options, style) {
  const legendId = `legend-${field.name}`;
  const buttons = options.map((option) => {
    const button = h("button", {
      type: "button",
      class: "choice",
      "aria-pressed": String(values[field.name] === option.value && field.value !== undefined),
      dataset: { value: JSON.stringify(option.value) },
      onclick: () => {
        values[field.name] = option.value;
        for (const other of buttons) other.setAttribute("aria-pressed", String(other === button));
        if (field.then) field.then(option.value, values);
      },
    }, option.label);
    return button;
  });
  if (buttons.length && field.autofocus !== false) buttons[0].setAttribute("data-autofocus", "");
  return h("fieldset", { class: `field ${style}`, "aria-labelledby": legendId }, h("legend", { id: legendId }, field.label), h("div", { class: "options" }, buttons));
}
