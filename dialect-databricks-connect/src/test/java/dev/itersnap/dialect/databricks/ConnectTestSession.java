package dev.itersnap.dialect.databricks;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connect.service.SparkConnectService;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/**
 * A local Spark Connect server and the Connect sessions of the test JVM. The server is the one local SparkSession with
 * Delta Lake of the test kit ({@link SparkTestSession}: two cores, UTC, Delta as the default format) serving Spark
 * Connect on the loopback address, on a port free when the tests start. Each {@link #newSession} is a Spark Connect
 * client session ({@code org.apache.spark.sql.connect.SparkSession}) of that server, as a job on serverless compute or
 * a standard cluster gets: every statement, result and error crosses gRPC, and its settings are the server session's.
 */
final class ConnectTestSession {
    private static String url;

    private ConnectTestSession() {
    }

    /** The server's address, {@code sc://127.0.0.1:<port>}, starting the server on first use. */
    static synchronized String url() {
        if (url == null) {
            int port;
            try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                port = s.getLocalPort();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            // read by SparkConf from the system properties when the context starts
            System.setProperty("spark.connect.grpc.binding.address", "127.0.0.1");
            System.setProperty("spark.connect.grpc.binding.port", Integer.toString(port));
            SparkSession server = SparkTestSession.get();
            SparkConnectService.start(server.sparkContext());
            url = "sc://127.0.0.1:" + port;
        }
        return url;
    }

    /** A new Spark Connect session of the local server: settings, temporary views and functions of its own. */
    static SparkSession newSession() {
        return org.apache.spark.sql.connect.SparkSession.builder().remote(url()).create();
    }
}
