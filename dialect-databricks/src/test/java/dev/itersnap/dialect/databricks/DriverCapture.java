package dev.itersnap.dialect.databricks;

import com.databricks.jdbc.api.impl.DatabricksConnection;
import com.databricks.jdbc.api.impl.DatabricksConnectionContextFactory;
import com.databricks.jdbc.api.impl.ImmutableSessionInfo;
import com.databricks.jdbc.api.impl.ImmutableSqlParameter;
import com.databricks.jdbc.api.internal.IDatabricksConnectionContext;
import com.databricks.jdbc.common.IDatabricksComputeResource;
import com.databricks.jdbc.dbclient.IDatabricksClient;

import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * A real {@code com.databricks:databricks-jdbc} connection whose network client is replaced by one that records what
 * the driver would send: the driver's own {@code DatabricksConnection}, {@code DatabricksPreparedStatement}, type
 * inference and parameter objects run unchanged, offline. The client is the driver's {@code IDatabricksClient}
 * seam (the driver's own constructor for it), the boundary where its Thrift client turns each parameter into
 * {@code TSparkParameter(type, value.toString())}.
 */
final class DriverCapture implements AutoCloseable {
    /** Where nothing listens: any attempt to reach a server fails at once. */
    static final String URL = "jdbc:databricks://127.0.0.1:9/default;transportMode=http;ssl=1;"
            + "httpPath=/sql/1.0/warehouses/abc123;AuthMech=3;UID=token;PWD=not-a-token;EnableTelemetry=0;"
            + "usethriftclient=1";

    /** One parameter as the driver hands it to its network client: its Databricks type and the text sent. */
    record Sent(String type, Object value) {
        String text() {
            return value == null ? null : value.toString();
        }
    }

    /** One executed statement: its SQL and parameters by ordinal. */
    record Execution(String sql, Map<Integer, Sent> parameters) {
    }

    private final List<Execution> executions = new ArrayList<>();
    private final DatabricksConnection connection;

    DriverCapture() throws SQLException {
        IDatabricksConnectionContext context = DatabricksConnectionContextFactory.create(URL, new Properties());
        IDatabricksClient client = (IDatabricksClient) Proxy.newProxyInstance(DriverCapture.class.getClassLoader(),
                new Class<?>[] {IDatabricksClient.class}, (proxy, method, args) -> {
                    switch (method.getName()) {
                        case "getConnectionContext": return context;
                        case "createSession":
                            return ImmutableSessionInfo.builder().sessionId("offline")
                                    .computeResource((IDatabricksComputeResource) args[0]).build();
                        case "executeStatement": {
                            @SuppressWarnings("unchecked")
                            Map<Integer, ImmutableSqlParameter> params = (Map<Integer, ImmutableSqlParameter>) args[2];
                            Map<Integer, Sent> sent = new TreeMap<>();
                            params.forEach((k, p) -> sent.put(k, new Sent(p.type().name(), p.value())));
                            executions.add(new Execution((String) args[0], sent));
                            throw new SQLException("offline: captured, not sent", "08000");
                        }
                        case "hashCode": return System.identityHashCode(proxy);
                        case "equals": return proxy == args[0];
                        case "toString": return "DriverCapture.client";
                        default: return null;
                    }
                });
        connection = new DatabricksConnection(context, client);
        connection.open();
    }

    Connection connection() {
        return connection;
    }

    /** Runs a prepared statement through the driver; the client records it and fails on purpose. */
    Execution execute(PreparedStatement ps) {
        int before = executions.size();
        try {
            ps.executeUpdate();
        } catch (SQLException expected) {
            if (!"08000".equals(expected.getSQLState()) && executions.size() == before) {
                throw new AssertionError("the driver failed before reaching its client: " + expected, expected);
            }
        }
        if (executions.size() == before) {
            throw new AssertionError("the driver did not execute the statement");
        }
        return executions.get(executions.size() - 1);
    }

    @Override
    public void close() {
        // the connection's close would call the client's deleteSession; nothing to release offline
    }
}
