import type { Metadata } from "next";
import type { ReactNode } from "react";
import { TRPCReactProvider } from "@/trpc/react";
import { Nav } from "@/components/Nav";
import "./globals.css";

export const metadata: Metadata = {
  title: "once — checkout that happens once",
  description: "A checkout whose every mutation is idempotent",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <TRPCReactProvider>
          <Nav />
          <main className="container">{children}</main>
        </TRPCReactProvider>
      </body>
    </html>
  );
}
