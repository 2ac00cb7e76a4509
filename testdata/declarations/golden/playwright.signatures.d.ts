declare const playwright: {
  browser_evaluate(params: {
    element?: string;
    target?: string;
    "function": string;
    filename?: string;
  }): Promise<unknown>;
  browser_emulate_media(params?: {
    colorScheme?: "light" | "dark" | null;
    reducedMotion?: "reduce" | "no-preference" | null;
    forcedColors?: "active" | "none" | null;
    contrast?: "more" | "no-preference" | null;
    media?: "screen" | "print" | null;
  }): Promise<unknown>;
  browser_take_screenshot(params: {
    element?: string;
    target?: string;
    type?: "png" | "jpeg" | "webp";
    filename?: string;
    fullPage?: boolean;
    scale: "css" | "device";
  }): Promise<unknown>;
  browser_fill_form(params: {
    fields: {
      element?: string;
      target: string;
      name: string;
      type: "textbox" | "checkbox" | "radio" | "combobox" | "slider";
      value: string;
    }[];
  }): Promise<unknown>;
  browser_run_code_unsafe(params?: {
    code?: string;
    filename?: string;
  }): Promise<unknown>;
  browser_close(): Promise<unknown>;
  browser_navigate(params: {
    url: string;
  }): Promise<unknown>;
  browser_tabs(params: {
    action: "list" | "new" | "close" | "select";
    index?: number;
    url?: string;
  }): Promise<unknown>;
};
