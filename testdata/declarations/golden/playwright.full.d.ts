declare const playwright: {
  /** Evaluate JavaScript expression on page or element */
  browser_evaluate(params: {
    /** Human-readable element description used to obtain permission to interact with the element */
    element?: string;
    /** Exact target element reference from the page snapshot, or a unique element selector */
    target?: string;
    /** () => { /* code *\/ } or (element) => { /* code *\/ } when element is provided */
    "function": string;
    /** File name to save the result to. Relative file names are resolved against the workspace root. If not provided, result is returned as text. */
    filename?: string;
  }): Promise<unknown>;
  /** Emulate CSS media features for the page, for example switch between the light and dark color scheme. Omitted parameters are left unchanged; null clears an override. */
  browser_emulate_media(params?: {
    /** Emulates the prefers-color-scheme media feature */
    colorScheme?: "light" | "dark" | null;
    /** Emulates the prefers-reduced-motion media feature */
    reducedMotion?: "reduce" | "no-preference" | null;
    /** Emulates the forced-colors media feature */
    forcedColors?: "active" | "none" | null;
    /** Emulates the prefers-contrast media feature */
    contrast?: "more" | "no-preference" | null;
    /** Changes the CSS media type of the page */
    media?: "screen" | "print" | null;
  }): Promise<unknown>;
  /** Take a screenshot of the current page. You can't perform actions based on the screenshot, use browser_snapshot for actions. */
  browser_take_screenshot(params: {
    /** Human-readable element description used to obtain permission to interact with the element */
    element?: string;
    /** Exact target element reference from the page snapshot, or a unique element selector */
    target?: string;
    /** Image format for the screenshot. If unset, inferred from the filename extension, otherwise png. */
    type?: "png" | "jpeg" | "webp";
    /** File name to save the screenshot to. Relative file names are resolved against the workspace root. If not specified, the screenshot is saved into the output directory as `page-{timestamp}.{png|jpeg|webp}`. */
    filename?: string;
    /** When true, takes a screenshot of the full scrollable page, instead of the currently visible viewport. Cannot be used with element screenshots. */
    fullPage?: boolean;
    /** Image resolution scale. "css" produces a screenshot sized in CSS pixels (smaller, consistent across devices). "device" produces a high-resolution screenshot using device pixels (larger, accounts for the device pixel ratio). Default is css. */
    scale: "css" | "device";
  }): Promise<unknown>;
  /** Fill multiple form fields */
  browser_fill_form(params: {
    /** Fields to fill in */
    fields: {
      /** Human-readable element description used to obtain permission to interact with the element */
      element?: string;
      /** Exact target element reference from the page snapshot, or a unique element selector */
      target: string;
      /** Human-readable field name */
      name: string;
      /** Type of the field */
      type: "textbox" | "checkbox" | "radio" | "combobox" | "slider";
      /** Value to fill in the field. If the field is a checkbox, the value should be `true` or `false`. If the field is a combobox, the value should be the text of the option. */
      value: string;
    }[];
  }): Promise<unknown>;
  /** Run a Playwright code snippet. Unsafe: executes arbitrary JavaScript in the Playwright server process and is RCE-equivalent. */
  browser_run_code_unsafe(params?: {
    /** A JavaScript function containing Playwright code to execute. It will be invoked with a single argument, page, which you can use for any page interaction. For example: `async (page) => { await page.getByRole('button', { name: 'Submit' }).click(); return await page.title(); }` */
    code?: string;
    /** Load code from the specified file. Relative file names are resolved against the workspace root. If both code and filename are provided, code will be ignored. */
    filename?: string;
  }): Promise<unknown>;
  /** Close the page */
  browser_close(): Promise<unknown>;
  /** Navigate to a URL */
  browser_navigate(params: {
    /** The URL to navigate to */
    url: string;
  }): Promise<unknown>;
  /** List, create, close, or select a browser tab. */
  browser_tabs(params: {
    /** Operation to perform */
    action: "list" | "new" | "close" | "select";
    /** Tab index, used for close/select. If omitted for close, current tab is closed. */
    index?: number;
    /** URL to navigate to in the new tab, used for new. */
    url?: string;
  }): Promise<unknown>;
};
