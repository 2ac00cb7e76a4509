declare const everything: {
  /** Echoes back the input string */
  echo(params: {
    /** Message to echo */
    message: string;
  }): Promise<unknown>;
  /** Returns the sum of two numbers */
  "get-sum"(params: {
    /** First number */
    a: number;
    /** Second number */
    b: number;
  }): Promise<unknown>;
  /** Alias for get-sum. */
  get_sum: (typeof everything)["get-sum"];
  /** Returns structured content along with an output schema for client data validation */
  "get-structured-content"(params: {
    /** Choose city */
    location: "New York" | "Chicago" | "Los Angeles";
  }): Promise<{
    /** Temperature in celsius */
    temperature: number;
    /** Weather conditions description */
    conditions: string;
    /** Humidity percentage */
    humidity: number;
  }>;
  /** Alias for get-structured-content. */
  get_structured_content: (typeof everything)["get-structured-content"];
  /** Returns a tiny MCP logo image. */
  "get-tiny-image"(): Promise<unknown>;
  /** Alias for get-tiny-image. */
  get_tiny_image: (typeof everything)["get-tiny-image"];
  /** Compresses a single file using gzip compression. Depending upon the selected output type, returns either the compressed data as a gzipped resource or a resource link, allowing it to be downloaded in a subsequent request during the current session. */
  "gzip-file-as-resource"(params?: {
    /** Name of the output file */
    name?: string;
    /** URL or data URI of the file content to compress */
    data?: string;
    /** How the resulting gzipped file should be returned. 'resourceLink' returns a link to a resource that can be read later, 'resource' returns a full resource object. */
    outputType?: "resourceLink" | "resource";
  }): Promise<unknown>;
  /** Alias for gzip-file-as-resource. */
  gzip_file_as_resource: (typeof everything)["gzip-file-as-resource"];
  /** Demonstrates a long running operation with progress updates. */
  "trigger-long-running-operation"(params?: {
    /** Duration of the operation in seconds */
    duration?: number;
    /** Number of steps in the operation */
    steps?: number;
  }): Promise<unknown>;
  /** Alias for trigger-long-running-operation. */
  trigger_long_running_operation: (typeof everything)["trigger-long-running-operation"];
  /** Simulates a deep research operation that gathers, analyzes, and synthesizes information. Demonstrates MCP task-based operations with progress through multiple stages. If 'ambiguous' is true and client supports elicitation, sends an elicitation request for clarification. */
  "simulate-research-query"(params: {
    /** The research topic to investigate */
    topic: string;
    /** Simulate an ambiguous query that requires clarification (triggers input_required status) */
    ambiguous?: boolean;
  }): Promise<unknown>;
  /** Alias for simulate-research-query. */
  simulate_research_query: (typeof everything)["simulate-research-query"];
  /** Returns all environment variables, helpful for debugging MCP server configuration */
  "get-env"(): Promise<unknown>;
  /** Alias for get-env. */
  get_env: (typeof everything)["get-env"];
};
