declare const hostinger: {
  /** Restart a Node.js application. */
  "hosting_restartNode.jsApplicationV1"(params: {
    username: string;
    domain: string;
  }): Promise<unknown>;
  /** Alias for hosting_restartNode.jsApplicationV1. */
  hosting_restartNode_jsApplicationV1: (typeof hostinger)["hosting_restartNode.jsApplicationV1"];
  /** List websites. */
  hosting_listWebsitesV1(params?: {
    page?: number;
  }): Promise<unknown>;
  /** List virtual machines. */
  VPS_getVirtualMachinesV1(): Promise<unknown>;
};
