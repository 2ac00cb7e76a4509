declare const firecrawl: {
  firecrawl_scrape(params: {
    url: string;
    formats?: ("markdown" | "html" | "rawHtml" | "screenshot" | "links" | "summary" | "changeTracking" | "branding" | "json" | "query" | "audio")[];
    jsonOptions?: {
      prompt?: string;
      schema?: Record<string, unknown>;
    };
    queryOptions?: {
      prompt: string;
      mode: "directQuote" | "freeform";
    };
    screenshotOptions?: {
      fullPage?: boolean;
      quality?: number;
      viewport?: {
        width: number;
        height: number;
      };
    };
    parsers?: "pdf"[];
    pdfOptions?: {
      maxPages?: number;
    };
    onlyMainContent?: boolean;
    redactPII?: boolean;
    includeTags?: string[];
    excludeTags?: string[];
    waitFor?: number;
    actions?: {
      type: "wait" | "screenshot" | "scroll" | "scrape" | "click" | "write" | "press" | "executeJavascript" | "generatePDF";
      selector?: string;
      milliseconds?: number;
      text?: string;
      key?: string;
      direction?: "up" | "down";
      script?: string;
      fullPage?: boolean;
    }[];
    mobile?: boolean;
    skipTlsVerification?: boolean;
    removeBase64Images?: boolean;
    location?: {
      country?: string;
      languages?: string[];
    };
    storeInCache?: boolean;
    zeroDataRetention?: boolean;
    maxAge?: number;
    lockdown?: boolean;
    proxy?: "basic" | "stealth" | "enhanced" | "auto";
    profile?: {
      name: string;
      saveChanges?: boolean;
    };
  }): Promise<unknown>;
  firecrawl_extract(params: {
    urls: string[];
    prompt?: string;
    schema?: Record<string, unknown>;
    allowExternalLinks?: boolean;
    enableWebSearch?: boolean;
    includeSubdomains?: boolean;
  }): Promise<unknown>;
  firecrawl_check_crawl_status(params: {
    id: string;
  }): Promise<unknown>;
};
